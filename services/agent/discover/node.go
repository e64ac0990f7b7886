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
	n.GPUDistance = inv.gpuDistance()
}

// linkDistance maps topo -m's link kinds onto the registration's.
var linkDistance = map[LinkKind]int{
	LinkSelf: domain.LinkSame, LinkNVLink: domain.LinkNVLink, LinkPIX: domain.LinkPIX, LinkPXB: domain.LinkPXB,
	LinkPHB: domain.LinkPHB, LinkNode: domain.LinkNode, LinkSys: domain.LinkSys,
}

// gpuDistance is the link matrix by GPU index, for placement to keep one
// job's GPUs on a node close; nil when topo -m was not read or does not
// cover every GPU index 0..n-1 once.
func (inv Inventory) gpuDistance() [][]int {
	n := len(inv.GPUs)
	if n == 0 || len(inv.GPULinks) != n {
		return nil
	}
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
	}
	seen := make([]bool, n)
	for a, ga := range inv.GPUs {
		if ga.Index < 0 || ga.Index >= n || seen[ga.Index] || len(inv.GPULinks[a]) != n {
			return nil
		}
		seen[ga.Index] = true
		for b, gb := range inv.GPUs {
			if gb.Index < 0 || gb.Index >= n {
				return nil
			}
			v, ok := linkDistance[inv.GPULinks.Between(a, b).Kind]
			if !ok {
				return nil
			}
			d[ga.Index][gb.Index] = v
		}
	}
	// A matrix the registration's checks would refuse (asymmetric, a GPU
	// "far" from itself) would take the whole node out: leave links out.
	for a := range d {
		for b := range d {
			if d[a][b] != d[b][a] || (d[a][b] == domain.LinkSame) != (a == b) {
				return nil
			}
		}
	}
	return d
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
