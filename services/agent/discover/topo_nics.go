package discover

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
)

// parseNearNICs reads, from `nvidia-smi topo -m`, the NICs behind each of
// the n GPUs' own PCIe switches (PIX, then PXB): the device columns after
// the GPUs, named by the "NIC Legend" (NIC0: mlx5_0). It is best effort —
// links only order a NUMA node's NICs — so anything it cannot read gives
// no NICs for that GPU rather than an error.
func parseNearNICs(out []byte, n int) [][]string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var cols []string
	type near struct {
		label string
		rank  int
	}
	rows := make([][]near, n)
	legend := map[string]string{}
	inLegend := false
	for sc.Scan() {
		// Driver 580 underlines the header row with terminal escapes.
		f := strings.Fields(stripANSI(sc.Text()))
		switch {
		case len(f) == 0:
		case f[0] == "NIC" && len(f) > 1 && f[1] == "Legend:":
			inLegend = true
		case inLegend:
			if label, ok := strings.CutSuffix(f[0], ":"); ok && len(f) == 2 && strings.HasPrefix(label, "NIC") {
				legend[label] = f[1]
			}
		case f[0] == "Legend:":
		case cols == nil && f[0] == "GPU0":
			cols = headerColumns(f)
		case cols != nil:
			i, ok := gpuLabel(f[0])
			if !ok || i >= n || len(f)-1 < len(cols) {
				continue
			}
			for j := n; j < len(cols); j++ {
				l, err := ParseLink(f[1+j])
				if err == nil && (l.Kind == LinkPIX || l.Kind == LinkPXB) {
					rows[i] = append(rows[i], near{cols[j], linkRank[l.Kind]})
				}
			}
		}
	}
	out2 := make([][]string, n)
	for i, r := range rows {
		slices.SortStableFunc(r, func(a, b near) int { return a.rank - b.rank })
		for _, x := range r {
			if name, ok := legend[x.label]; ok {
				out2[i] = append(out2[i], name)
			}
		}
	}
	return out2
}
