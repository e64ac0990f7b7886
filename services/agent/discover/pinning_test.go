package discover

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// TestPinningMatchesGPUBindClosest runs the whole chain over the real
// machines' fixtures: discover → the node the agent registers → placement
// with gpuBind closest → what the agent pins. Like Slurm's
// --gpu-bind=closest, every rank's GPUs, cores, memory nodes and NICs are
// on one NUMA node, the GPUs'.
func TestPinningMatchesGPUBindClosest(t *testing.T) {
	for _, tc := range []struct {
		fixture                    string
		gpus, tasks, cpus          int
		wantUnschedulable, wantNIC bool
	}{
		{fixture: "dgx-h100", gpus: 8, tasks: 8, cpus: 12, wantNIC: true}, // the seed's job, one node of it
		{fixture: "dgx-h100", gpus: 8, tasks: 2, cpus: 56, wantNIC: true}, // a rank per socket, every core
		{fixture: "dgx-h100", gpus: 2, tasks: 2, cpus: 100, wantNIC: true},
		{fixture: "pcie-4x-l40s", gpus: 4, tasks: 4, cpus: 16}, // no RDMA NICs: NCCL chooses
		{fixture: "pcie-4x-l40s", gpus: 4, tasks: 1, cpus: 8, wantUnschedulable: true},
		{fixture: "cpu-only", gpus: 1, tasks: 1, cpus: 1, wantUnschedulable: true},
	} {
		inv, err := Discover(context.Background(), fixture(t, tc.fixture))
		if err != nil {
			t.Fatal(err)
		}
		node := domain.Node{Name: "n1", Addr: "n1"}
		inv.FillNode(&node)
		snap := &place.Snapshot{Nodes: []place.NodeView{{Node: &node, Up: true, Free: seqInts(node.GPUs)}}, PortBase: 29500, PortCount: 10}
		req := place.Request{JobID: "j", Nodes: 1, GPUsPerNode: tc.gpus, TasksPerNode: tc.tasks, CPUsPerTask: tc.cpus, GPUBind: place.BindClosest}
		res := place.Place(snap, req, time.Unix(0, 0), 1)
		name := tc.fixture + " " + res.Reason
		if tc.wantUnschedulable {
			if res.Code != place.Unschedulable {
				t.Errorf("%s: %s, want Unschedulable", name, res.Code)
			}
			continue
		}
		if res.Code != place.Placed {
			t.Fatalf("%s: %s %s", name, res.Code, res.Detail)
		}
		ranks := res.Placement.Nodes[0].Ranks
		if len(ranks) != tc.tasks {
			t.Fatalf("%s: %d ranks", name, len(ranks))
		}
		for _, r := range ranks {
			numa := inv.GPUs[r.GPUs[0]].NUMANode
			var d domain.NUMANode
			for _, nd := range node.NUMA {
				if nd.ID == numa {
					d = nd
				}
			}
			for _, g := range r.GPUs {
				if inv.GPUs[g].NUMANode != numa {
					t.Errorf("%s rank %d: GPUs %v on two NUMA nodes", name, r.Rank, r.GPUs)
				}
			}
			if len(r.CPUs) != tc.cpus {
				t.Errorf("%s rank %d: %d cores", name, r.Rank, len(r.CPUs))
			}
			for _, c := range r.CPUs {
				if !slices.Contains(d.CPUs, c) {
					t.Errorf("%s rank %d: core %d is not on NUMA node %d with its GPUs %v", name, r.Rank, c, numa, r.GPUs)
				}
			}
			if mems := place.MemoryNodes(node, r.CPUs); !slices.Equal(mems, []int{numa}) {
				t.Errorf("%s rank %d: memory on NUMA nodes %v, want %d", name, r.Rank, mems, numa)
			}
			nics := place.ClosestNICs(node, r.GPUs)
			if (len(nics) > 0) != tc.wantNIC {
				t.Errorf("%s rank %d: NICs %v", name, r.Rank, nics)
			}
			// Each GPU's traffic goes through the NIC behind its own PCIe
			// switch, where topo -m names one (on the DGX: GPU1 → mlx5_3,
			// not the storage port mlx5_1).
			for _, g := range r.GPUs {
				if near := inv.GPUs[g].NearNICs; len(near) > 0 && !slices.ContainsFunc(near, func(n string) bool { return slices.Contains(nics, n) }) {
					t.Errorf("%s rank %d: NICs %v, none behind GPU %d's switch (%v)", name, r.Rank, nics, g, near)
				}
			}
			for _, nic := range nics {
				if i := slices.IndexFunc(inv.NICs, func(n NIC) bool { return n.Name == nic }); i < 0 || inv.NICs[i].NUMANode != numa {
					t.Errorf("%s rank %d: NIC %s is not on NUMA node %d", name, r.Rank, nic, numa)
				}
			}
		}
	}
}

func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
