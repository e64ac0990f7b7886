package discover

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints inv for a person: CPUs per NUMA node with the GPUs and
// NICs attached to it, then the GPU link matrix and the notes.
func WriteText(w io.Writer, inv Inventory) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CPUs\t%d usable (%d threads per core)\n", inv.CPUs, inv.ThreadsPerCore)
	for _, n := range inv.NUMANodes {
		fmt.Fprintf(tw, "NUMA %d\tCPUs %s (%d cores), %d MiB memory\n", n.ID, orNone(FormatCPUList(n.CPUs)), n.Cores, n.MemoryMiB)
	}
	for _, g := range inv.GPUs {
		fmt.Fprintf(tw, "GPU %d\t%s, %d MiB, %s, NUMA %s, %s\n", g.Index, g.Name, g.MemoryMiB, g.PCIBusID, numaText(g.NUMANode), g.UUID)
	}
	for _, n := range inv.NICs {
		fmt.Fprintf(tw, "NIC %s\tNUMA %s, port 1 %s\n", n.Name, numaText(n.NUMANode), n.State)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(inv.GPULinks) > 0 {
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "\nGPU links\t"+gpuHeader(len(inv.GPULinks)))
		for i, row := range inv.GPULinks {
			cells := make([]string, len(row))
			for j, l := range row {
				cells[j] = l.String()
			}
			fmt.Fprintf(tw, "GPU%d\t%s\n", i, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range inv.Notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

func gpuHeader(n int) string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("GPU%d", i)
	}
	return strings.Join(h, "\t")
}

func numaText(n int) string {
	if n < 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
