package discover

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// parseTopo reads the GPU-to-GPU cells of `nvidia-smi topo -m` for n GPUs.
// The header names the device columns (GPU0…, then NICs, which are skipped)
// up to "CPU Affinity"; each GPU row gives one cell per device column.
func parseTopo(out []byte, n int) (LinkMatrix, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var cols []string
	m := make(LinkMatrix, n)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(stripANSI(sc.Text()))
		if len(f) == 0 {
			continue
		}
		if f[0] == "Legend:" {
			break
		}
		if cols == nil {
			if f[0] != "GPU0" {
				continue // banners some drivers print first
			}
			cols = headerColumns(f)
			if err := checkGPUColumns(cols, n); err != nil {
				return nil, errors.Wrapf(err, "nvidia-smi topo -m header (line %d)", line)
			}
			continue
		}
		i, isGPU := gpuLabel(f[0])
		if !isGPU {
			continue // a NIC row
		}
		if i >= n || m[i] != nil {
			return nil, errors.Newf("nvidia-smi topo -m line %d: unexpected or repeated row %s", line, truncate(f[0]))
		}
		row, err := parseTopoRow(f[1:], i, n)
		if err != nil {
			return nil, errors.Wrapf(err, "nvidia-smi topo -m line %d (%s)", line, f[0])
		}
		m[i] = row
	}
	if err := sc.Err(); err != nil {
		return nil, errors.Wrap(err, "reading nvidia-smi topo -m")
	}
	if cols == nil {
		return nil, errors.New("nvidia-smi topo -m: no header line starting with GPU0")
	}
	for i, row := range m {
		if row == nil {
			return nil, errors.Newf("nvidia-smi topo -m: no row for GPU%d", i)
		}
	}
	return m, nil
}

// headerColumns returns the device column labels: everything before
// "CPU Affinity" (the affinity columns hold spaces in their names).
func headerColumns(f []string) []string {
	for i, s := range f {
		if s == "CPU" || s == "NUMA" {
			return f[:i]
		}
	}
	return f
}

// checkGPUColumns wants exactly GPU0..GPUn-1 first, NICs (if any) after.
func checkGPUColumns(cols []string, n int) error {
	gpus := 0
	for _, c := range cols {
		if i, ok := gpuLabel(c); ok {
			if i != gpus {
				return errors.Newf("column %s out of order", truncate(c))
			}
			gpus++
		}
	}
	if gpus != n {
		return errors.Newf("%d GPU columns, but nvidia-smi --query-gpu listed %d GPUs", gpus, n)
	}
	return nil
}

func parseTopoRow(cells []string, self, n int) ([]Link, error) {
	if len(cells) < n {
		return nil, errors.Newf("%d cells, want at least %d", len(cells), n)
	}
	row := make([]Link, n)
	for j := range n {
		l, err := ParseLink(cells[j])
		if err != nil {
			return nil, errors.Wrapf(err, "column GPU%d", j)
		}
		if (j == self) != (l.Kind == LinkSelf) {
			return nil, errors.Newf("column GPU%d: %q, but X marks exactly the GPU's own column", j, truncate(cells[j]))
		}
		row[j] = l
	}
	return row, nil
}

// ansiEscape matches the terminal escape sequences (CSI: ESC [ params
// letter) that nvidia-smi puts in its output even when it is not a
// terminal: driver 580 underlines the topo -m header ("\x1b[4mGPU0\t…
// \x1b[0m"), which hid the header and made the GPU0 row read as one.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// stripANSI removes terminal escape sequences from a line.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiEscape.ReplaceAllString(s, "")
}

func gpuLabel(s string) (int, bool) {
	n, ok := strings.CutPrefix(s, "GPU")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil && i >= 0 && strconv.Itoa(i) == n
}
