package place

import (
	"maps"
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Take removes a placement's GPUs, cores and MASTER_PORT from the snapshot,
// so later decisions in the same cycle do not reuse them. Nodes the
// snapshot does not have are skipped.
func (s *Snapshot) Take(p domain.Placement) {
	s.eachPlaced(p, func(nv *NodeView, np domain.NodePlacement) {
		nv.Free = without(nv.Free, np.GPUs)
		if cpus := placedCPUs(np); len(cpus) > 0 {
			if nv.FreeCPUs == nil {
				nv.FreeCPUs = allCPUs(*nv.Node)
			}
			nv.FreeCPUs = without(nv.FreeCPUs, cpus)
		}
	})
	if p.MasterAddr == "" {
		return
	}
	if s.UsedPorts == nil {
		s.UsedPorts = map[string]map[int]bool{}
	}
	// A copy: clones share the set (see Clone).
	ports := maps.Clone(s.UsedPorts[p.MasterAddr])
	if ports == nil {
		ports = map[int]bool{}
	}
	ports[p.MasterPort] = true
	s.UsedPorts[p.MasterAddr] = ports
}

// Release is the inverse of Take: it returns a placement's GPUs, cores and
// port to the snapshot, as when a running gang ends (the queue policy uses
// it to see when a waiting gang could start). Untracked cores (FreeCPUs
// nil) stay untracked.
func (s *Snapshot) Release(p domain.Placement) {
	s.eachPlaced(p, func(nv *NodeView, np domain.NodePlacement) {
		nv.Free = union(nv.Free, slices.DeleteFunc(slices.Clone(np.GPUs), func(g int) bool { return withdrawn(nv.Node, g) }))
		if cpus := placedCPUs(np); len(cpus) > 0 && nv.FreeCPUs != nil {
			nv.FreeCPUs = union(nv.FreeCPUs, cpus)
		}
	})
	if ports := s.UsedPorts[p.MasterAddr]; ports[p.MasterPort] {
		ports = maps.Clone(ports) // shared with clones (see Clone)
		delete(ports, p.MasterPort)
		s.UsedPorts[p.MasterAddr] = ports
	}
}

// eachPlaced calls fn with each node of p that the snapshot has (others
// are skipped) and p's share of it.
func (s *Snapshot) eachPlaced(p domain.Placement, fn func(nv *NodeView, np domain.NodePlacement)) {
	for _, np := range p.Nodes {
		if i := s.find(np.Node); i >= 0 {
			fn(&s.Nodes[i], np)
		}
	}
}

func placedCPUs(np domain.NodePlacement) []int {
	var out []int
	for _, r := range np.Ranks {
		out = append(out, r.CPUs...)
	}
	return out
}

// NodeCPUs is every core of a node, ascending: those its NUMA layout
// lists, else 0..CPUs-1. A discovered node's cores may have gaps (an
// agent's cpuset, offline CPUs), so CPUs alone does not say which exist.
func NodeCPUs(n domain.Node) []int { return allCPUs(n) }

// allCPUs is NodeCPUs.
func allCPUs(n domain.Node) []int {
	var out []int
	for _, d := range n.NUMA {
		out = append(out, d.CPUs...)
	}
	if len(n.NUMA) == 0 {
		return seq(n.CPUs)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// without returns free minus taken as a new slice (never nil).
func without(free, taken []int) []int {
	out := make([]int, 0, len(free))
	for _, g := range free {
		if !slices.Contains(taken, g) {
			out = append(out, g)
		}
	}
	return out
}

// union returns the sorted, duplicate-free union as a new slice.
func union(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
