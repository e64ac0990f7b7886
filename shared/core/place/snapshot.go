package place

import (
	"maps"
	"slices"
	"sort"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// NodeView is one node as placement sees it.
type NodeView struct {
	// Node is shared by every clone of a snapshot and never written
	// through: the record changes only by a new pointer.
	Node *domain.Node `json:"node"`
	// Free lists the free GPU indices, ascending.
	Free []int `json:"free"`
	// FreeCPUs lists the free CPU cores, ascending. nil means the cores are
	// not tracked and all of the node's cores are free; a non-nil empty
	// slice means none are. Take and Release keep it non-nil once they
	// assign cores. (JSON keeps the distinction: null versus [].)
	FreeCPUs []int `json:"freeCPUs"`
	// Up is false for a node whose agent lease expired.
	Up bool `json:"up"`
	// Drained nodes run what they run but take no new gangs.
	Drained bool `json:"drained,omitempty"`
}

// Snapshot is the cluster state a decision is made on. It is not safe for
// concurrent use: Place caches an index in it and Take/Release modify it.
// Use Clone to give another goroutine (or a what-if) its own copy.
type Snapshot struct {
	Nodes []NodeView `json:"nodes"`
	// Topology is the operator's topology file, if any. Node labels
	// (domain.Node Leaf/Spine/Block) fill in nodes it does not place; the
	// file wins where both exist (topology.Merge). nil: labels only.
	Topology *topology.Topology `json:"topology,omitempty"`
	// UsedPorts holds the claimed MASTER_PORTs per address.
	UsedPorts map[string]map[int]bool `json:"usedPorts,omitempty"`
	// PortBase and PortCount bound MASTER_PORT choices.
	PortBase  int `json:"portBase"`
	PortCount int `json:"portCount"`

	// idx is derived from Nodes' identities and labels and Topology. It is
	// immutable once built and shared by clones; Place rebuilds it when it
	// no longer matches (see index.matches).
	idx *index
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

// FreeGPUs counts the free GPUs on up, undrained nodes.
func (s *Snapshot) FreeGPUs() int {
	n := 0
	for _, nv := range s.Nodes {
		if nv.Up && !nv.Drained {
			n += len(nv.Free)
		}
	}
	return n
}

// Clone returns a copy that a decision or a what-if may change without
// touching s. It shares what nothing changes in place: the nodes' Free
// and FreeCPUs lists (Take, Release and the callers that build a snapshot
// replace a list, never write into one) and the port set of each address
// (Take and Release copy it before changing it). Planning clones the
// whole cluster twice or more a cycle; copying those lists and sets made
// a third of a clone's bytes and an allocation per node and per address.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Nodes = slices.Clone(s.Nodes)
	c.UsedPorts = maps.Clone(s.UsedPorts)
	return &c
}

// EmptyCluster is a snapshot of the given nodes all up and idle: the
// question "could this gang ever run here?". Labels give the topology; set
// Topology on the result to add a topology file.
func EmptyCluster(nodes map[string]domain.Node) *Snapshot {
	s := &Snapshot{PortBase: 1, PortCount: 1}
	for _, n := range nodes {
		// Withdrawn GPUs count: an operator's resume returns them.
		s.Nodes = append(s.Nodes, NodeView{Node: &n, Free: seq(n.GPUs), Up: true})
	}
	s.Sort()
	return s
}

func seq(n int) []int {
	out := make([]int, max(n, 0))
	for i := range out {
		out[i] = i
	}
	return out
}

// find returns the position of the named node, or -1. It uses the index
// when it has one that still agrees, and scans otherwise: it never builds
// the index, which costs far more than a scan.
func (s *Snapshot) find(name string) int {
	if s.idx != nil {
		if i, ok := s.idx.byName[name]; ok && int(i) < len(s.Nodes) && s.Nodes[i].Node.Name == name {
			return int(i)
		}
	}
	for i := range s.Nodes {
		if s.Nodes[i].Node.Name == name {
			return i
		}
	}
	return -1
}
