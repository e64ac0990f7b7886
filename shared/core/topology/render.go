package topology

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cockroachdb/errors"
)

// Render writes the switch tree, one switch per line indented two spaces per
// depth, with its level, the number of nodes beneath it and their free/total
// GPUs as reported by gpus; then the blocks the same way. Roots, children and
// blocks come in name order, so output is stable. gpus may be nil, which
// prints "-" for the GPU column.
func (t *Topology) Render(w io.Writer, gpus func(node string) (free, total int)) error {
	// Ask once per node: gpus may be a lookup in a large snapshot, and
	// each node would otherwise be summed once per switch above it.
	type count struct{ free, total int }
	per := make(map[string]count, len(t.nodeLeaf)+len(t.nodeBlock))
	sum := func(nodes []string) string {
		if gpus == nil {
			return "-"
		}
		var c count
		for _, n := range nodes {
			got, ok := per[n]
			if !ok {
				got.free, got.total = gpus(n)
				per[n] = got
			}
			c.free += got.free
			c.total += got.total
		}
		return fmt.Sprintf("%d/%d", c.free, c.total)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(t.roots) > 0 {
		fmt.Fprintln(tw, "SWITCH\tLEVEL\tNODES\tFREE/TOTAL GPUS")
	}
	var walk func(name string, depth int)
	walk = func(name string, depth int) {
		sw := t.switches[name]
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t%s\n", strings.Repeat("  ", depth), name, sw.level, len(sw.under), sum(sw.under))
		for _, c := range sw.children {
			walk(c, depth+1)
		}
	}
	for _, r := range t.roots {
		walk(r, 0)
	}
	if len(t.blockNames) > 0 {
		if len(t.roots) > 0 {
			fmt.Fprintln(tw) // a line without tabs also restarts column alignment
		}
		fmt.Fprintln(tw, "BLOCK\tNODES\tFREE/TOTAL GPUS")
		for _, b := range t.blockNames {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", b, len(t.blocks[b]), sum(t.blocks[b]))
		}
	}
	// tabwriter buffers everything and reports the first write error here.
	return errors.Wrap(tw.Flush(), "rendering topology")
}
