package place

import (
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// What a node's agent decides for a rank from its own layout, beside the
// GPUs and cores placement gave it: the NICs it talks through and the NUMA
// nodes its memory comes from. Pure, so the agent and tests share it.

// ClosestNICs returns the RDMA NICs for a rank with these GPUs: for each
// GPU, the NIC at its GPU's position among the NICs of its NUMA node
// (discovery lists a NUMA node's NICs so that its k-th GPU and k-th NIC
// share a PCIe switch where nvidia-smi topo -m says so: on a DGX H100,
// GPU1 and mlx5_3), wrapping when a NUMA node has fewer NICs than GPUs. Without
// NICs on a GPU's NUMA node that GPU adds none: a NIC across the socket
// link is no better than letting NCCL choose. No duplicates, in the GPUs'
// order.
func ClosestNICs(n domain.Node, gpus []int) []string {
	var out []string
	for _, g := range gpus {
		for _, d := range n.NUMA {
			pos := slices.Index(d.GPUs, g)
			if pos < 0 || len(d.NICs) == 0 {
				continue
			}
			if nic := d.NICs[pos%len(d.NICs)]; !slices.Contains(out, nic) {
				out = append(out, nic)
			}
		}
	}
	return out
}

// MemoryNodes returns the NUMA nodes holding these cores, ascending: the
// nodes a rank pinned to them takes its memory from, as a cpuset's mems
// would be (with closest binding, exactly one). Nil when cores is empty or
// the node has no NUMA layout.
func MemoryNodes(n domain.Node, cores []int) []int {
	var out []int
	for _, d := range n.NUMA {
		for _, c := range cores {
			if slices.Contains(d.CPUs, c) {
				out = append(out, d.ID)
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Pin is where a rank runs on its node: the cores of its CPU affinity and
// the NUMA nodes of its memory (nil: not pinned in that respect). A rank
// with cores (cpusPerTask) runs on them with memory from their NUMA nodes.
// A rank of a closest-bound gang without cores runs on every core of its
// GPUs' NUMA node, shared with the node's other such ranks, with memory
// from it: Slurm's --gpu-bind=closest never leaves a task unbound from its
// GPUs' socket either. Otherwise nothing is pinned.
func Pin(n domain.Node, r domain.Rank, closest bool) (cpus, mems []int) {
	if len(r.CPUs) > 0 {
		return r.CPUs, MemoryNodes(n, r.CPUs)
	}
	if !closest || len(r.GPUs) == 0 {
		return nil, nil
	}
	for _, d := range n.NUMA {
		if !slices.ContainsFunc(r.GPUs, func(g int) bool { return !slices.Contains(d.GPUs, g) }) {
			return slices.Clone(d.CPUs), []int{d.ID}
		}
	}
	return nil, nil // GPUs on several NUMA nodes, or on none the node knows
}
