package placement

import (
	"sort"

	"github.com/lockstep-dev/lockstep/shared/domain"
)

// NodeView is one node as placement sees it.
type NodeView struct {
	Node domain.Node `json:"node"`
	// Free lists the free GPU indices, ascending.
	Free []int `json:"free"`
	// Up is false for a node whose agent lease expired.
	Up bool `json:"up"`
}

// Snapshot is the cluster state a decision is made on.
type Snapshot struct {
	Nodes []NodeView `json:"nodes"`
	// UsedPorts holds the claimed MASTER_PORTs per address.
	UsedPorts map[string]map[int]bool `json:"usedPorts,omitempty"`
	// PortBase and PortCount bound MASTER_PORT choices.
	PortBase  int `json:"portBase"`
	PortCount int `json:"portCount"`
}

// Sort orders nodes by name so that iteration is deterministic.
func (s *Snapshot) Sort() {
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Node.Name < s.Nodes[j].Node.Name })
}

// Capacity is the GPU count of the snapshot's up nodes, and of all nodes.
func (s *Snapshot) Capacity() (up, total int) {
	for _, n := range s.Nodes {
		total += n.Node.GPUs
		if n.Up {
			up += n.Node.GPUs
		}
	}
	return up, total
}

// Take removes a placement's GPUs and port from the snapshot, so later
// decisions in the same cycle do not reuse them.
func (s *Snapshot) Take(p domain.Placement) {
	byName := make(map[string]*NodeView, len(s.Nodes))
	for i := range s.Nodes {
		byName[s.Nodes[i].Node.Name] = &s.Nodes[i]
	}
	for _, np := range p.Nodes {
		nv := byName[np.Node]
		if nv == nil {
			continue
		}
		nv.Free = without(nv.Free, np.GPUs)
	}
	if s.UsedPorts == nil {
		s.UsedPorts = map[string]map[int]bool{}
	}
	if s.UsedPorts[p.MasterAddr] == nil {
		s.UsedPorts[p.MasterAddr] = map[int]bool{}
	}
	s.UsedPorts[p.MasterAddr][p.MasterPort] = true
}

func without(free, taken []int) []int {
	drop := make(map[int]bool, len(taken))
	for _, g := range taken {
		drop[g] = true
	}
	out := make([]int, 0, len(free))
	for _, g := range free {
		if !drop[g] {
			out = append(out, g)
		}
	}
	return out
}

// EmptyCluster is a snapshot of the given nodes all up and idle: the
// question "could this gang ever run here?".
func EmptyCluster(nodes map[string]domain.Node) *Snapshot {
	s := &Snapshot{PortBase: 1, PortCount: 1}
	for _, n := range nodes {
		free := make([]int, n.GPUs)
		for i := range free {
			free[i] = i
		}
		s.Nodes = append(s.Nodes, NodeView{Node: n, Free: free, Up: true})
	}
	s.Sort()
	return s
}
