package discover

import (
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// FillNode writes what discovery found into n, the node an agent
// registers: its GPUs (count, model, smallest memory), one past its
// highest usable core number, and per NUMA node the GPUs, usable cores,
// memory and usable RDMA NICs there. Name, address and labels are the
// caller's; Simulated is cleared (these GPUs are real).
//
// A NUMA node's NICs come in its GPUs' order: first the NIC behind the
// first GPU's PCIe switch (topo -m), then the second GPU's, …, then the
// rest (storage ports) in name order, so that the k-th GPU of a NUMA node
// and its k-th NIC share a switch (place.ClosestNICs relies on it).
//
// A GPU whose NUMA node the kernel does not know is on no NUMA node (closest
// binding never gives it out) unless the machine has only one, which must be
// its own. A NIC counts when its port is ACTIVE, or its state unknown: a
// port known to be down would only fail NCCL.
func (inv Inventory) FillNode(n *domain.Node) {
	n.GPUs = len(inv.GPUs)
	n.Simulated = false
	n.GPUModel, n.GPUMemoryMiB = "", 0
	for i, g := range inv.GPUs {
		if i == 0 || g.MemoryMiB < n.GPUMemoryMiB {
			n.GPUMemoryMiB = g.MemoryMiB
		}
	}
	// A mixed node has no one model: a spec asking for one must not land
	// on GPUs of another.
	if len(inv.GPUs) > 0 && !slices.ContainsFunc(inv.GPUs, func(g GPU) bool { return g.Name != inv.GPUs[0].Name }) {
		n.GPUModel = inv.GPUs[0].Name
	}
	n.CPUs = 0
	n.NUMA = make([]domain.NUMANode, 0, len(inv.NUMANodes))
	for _, d := range inv.NUMANodes {
		nd := domain.NUMANode{ID: d.ID, GPUs: []int{}, CPUs: slices.Clone(d.CPUs), MemoryMiB: d.MemoryMiB}
		if nd.CPUs == nil {
			nd.CPUs = []int{}
		}
		for _, g := range inv.GPUs {
			if g.NUMANode == d.ID || (g.NUMANode < 0 && len(inv.NUMANodes) == 1) {
				nd.GPUs = append(nd.GPUs, g.Index)
			}
		}
		var usable []string
		for _, c := range inv.NICs {
			if c.NUMANode == d.ID && (c.State == "ACTIVE" || c.State == "UNKNOWN") {
				usable = append(usable, c.Name)
			}
		}
		nd.NICs = nearFirst(usable, nd.GPUs, inv.GPUs)

		for _, c := range d.CPUs {
			n.CPUs = max(n.CPUs, c+1)
		}
		n.NUMA = append(n.NUMA, nd)
	}
}

// UUIDs returns the GPUs' UUIDs by index, for CUDA_VISIBLE_DEVICES by UUID.
func (inv Inventory) UUIDs() []string {
	out := make([]string, len(inv.GPUs))
	for i, g := range inv.GPUs {
		out[i] = g.UUID
	}
	return out
}

// nearFirst orders usable NICs: each GPU's nearest unused one, in GPU
// order, then the others as they came.
func nearFirst(usable []string, gpus []int, all []GPU) []string {
	var out []string
	for _, g := range gpus {
		for _, nic := range all[g].NearNICs {
			if slices.Contains(usable, nic) && !slices.Contains(out, nic) {
				out = append(out, nic)
				break
			}
		}
	}
	for _, nic := range usable {
		if !slices.Contains(out, nic) {
			out = append(out, nic)
		}
	}
	return out
}
