package placetest

import (
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// ClusterBuilder builds a place.Snapshot.
type ClusterBuilder struct {
	snap place.Snapshot
}

// MakeCluster starts an empty snapshot with 100 MASTER_PORTs from 29500.
func MakeCluster() *ClusterBuilder {
	return &ClusterBuilder{snap: place.Snapshot{PortBase: 29500, PortCount: 100}}
}

// Add appends nodes.
func (b *ClusterBuilder) Add(nodes ...*NodeBuilder) *ClusterBuilder {
	for _, n := range nodes {
		b.snap.Nodes = append(b.snap.Nodes, n.Obj())
	}
	return b
}

// AddViews appends built node views.
func (b *ClusterBuilder) AddViews(nodes ...place.NodeView) *ClusterBuilder {
	b.snap.Nodes = append(b.snap.Nodes, nodes...)
	return b
}

// Topology sets the topology file.
func (b *ClusterBuilder) Topology(t *topology.Topology) *ClusterBuilder {
	b.snap.Topology = t
	return b
}

// Ports sets the MASTER_PORT range.
func (b *ClusterBuilder) Ports(base, count int) *ClusterBuilder {
	b.snap.PortBase, b.snap.PortCount = base, count
	return b
}

// UsePort marks a port as claimed on an address.
func (b *ClusterBuilder) UsePort(addr string, port int) *ClusterBuilder {
	if b.snap.UsedPorts == nil {
		b.snap.UsedPorts = map[string]map[int]bool{}
	}
	if b.snap.UsedPorts[addr] == nil {
		b.snap.UsedPorts[addr] = map[int]bool{}
	}
	b.snap.UsedPorts[addr][port] = true
	return b
}

// Obj returns the snapshot, nodes sorted by name.
func (b *ClusterBuilder) Obj() *place.Snapshot {
	s := b.snap.Clone()
	s.Sort()
	return s
}
