package place

import (
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// What a node's agent decides for a rank from its own layout, beside the
// GPUs and cores placement gave it: the NICs it talks through and the NUMA
// nodes its memory comes from. Pure, so the agent and tests share it.

// ClosestNICs returns the RDMA NICs for a rank with these GPUs: for each
// GPU, the NIC at its GPU's position among the NICs of its NUMA node (on a
// DGX H100, GPU k and NIC k share a PCIe switch, and both are numbered in
// bus order), wrapping when a NUMA node has fewer NICs than GPUs. Without
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
