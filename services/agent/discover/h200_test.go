package discover

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// testdata/h200-vm is a real machine, captured by `lockstep agent
// --discover`'s own sources on it (2026-12-04): a KVM guest with one
// NVIDIA H200, 16 vCPUs on one NUMA node, driver 580.159.04. Its
// nvidia-smi underlines the topo -m header with terminal escapes, and its
// kernel reports the GPU's numa_node as -1; discovery failed on both
// ("no row for GPU0") before.
func TestDiscoverARealH200VM(t *testing.T) {
	inv, err := Discover(context.Background(), fixture(t, "h200-vm"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.CPUs != 16 || inv.ThreadsPerCore != 1 || len(inv.NUMANodes) != 1 || inv.NUMANodes[0].MemoryMiB < 120000 {
		t.Fatalf("CPUs %d, threads per core %d, NUMA nodes %+v", inv.CPUs, inv.ThreadsPerCore, inv.NUMANodes)
	}
	if len(inv.GPUs) != 1 {
		t.Fatalf("GPUs %+v, want one", inv.GPUs)
	}
	g := inv.GPUs[0]
	if g.Name != "NVIDIA H200" || g.MemoryMiB != 143771 || g.PCIBusID != "0000:00:06.0" || g.NUMANode != 0 ||
		g.UUID != "GPU-66de498a-102e-a86f-faf1-001d278a12af" {
		t.Errorf("GPU %+v", g)
	}
	if inv.GPULinks.Between(0, 0).Kind != LinkSelf {
		t.Errorf("links %v, want GPU0's own cell X", inv.GPULinks)
	}
	if !slices.ContainsFunc(inv.Notes, func(n string) bool { return strings.Contains(n, "the kernel reports no NUMA node; on node 0") }) {
		t.Errorf("notes %q do not say where the GPU was put", inv.Notes)
	}
	// And a rank bound closest gets it, with cores of its node.
	node := domain.Node{Name: "h200", Addr: "h200"}
	inv.FillNode(&node)
	snap := &place.Snapshot{Nodes: []place.NodeView{{Node: &node, Up: true, Free: seqInts(node.GPUs)}}, PortBase: 29500, PortCount: 10}
	req := place.Request{JobID: "j", Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1, CPUsPerTask: 4, GPUBind: place.BindClosest}
	if res := place.Place(snap, req, time.Unix(0, 0), 1); res.Code != place.Placed {
		t.Errorf("a 1-GPU rank bound closest: %s %s %s", res.Code, res.Reason, res.Detail)
	}
}

// Terminal escapes anywhere in topo -m are not part of the cells.
func TestTopoIgnoresTerminalEscapes(t *testing.T) {
	out := "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n" +
		"GPU0\t X \tNV18\t0-15\t0\t\tN/A\n" +
		"\x1b[1mGPU1\x1b[0m\tNV18\t X \t0-15\t0\t\tN/A\n\nLegend:\n"
	m, err := parseTopo([]byte(out), 2)
	if err != nil {
		t.Fatal(err)
	}
	if m.Between(0, 1).String() != "NV18" || m.Between(1, 1).Kind != LinkSelf {
		t.Errorf("links %v", m)
	}
}
