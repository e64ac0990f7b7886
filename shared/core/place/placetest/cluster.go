package placetest

import (
	"maps"
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
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

// Obj returns the snapshot, nodes sorted by name. It shares nothing with
// the builder, which may go on changing its own.
func (b *ClusterBuilder) Obj() *place.Snapshot {
	s := DeepCopy(&b.snap)
	s.Sort()
	return s
}

// DeepCopy copies a snapshot sharing nothing it could change, not even the
// node records, lists and port sets that Clone shares: the copy a test
// compares with to see that code left a snapshot as it was, which a Clone,
// sharing them, would not show if they were written in place.
func DeepCopy(s *place.Snapshot) *place.Snapshot {
	c := s.Clone()
	for i := range c.Nodes {
		nv := &c.Nodes[i]
		nv.Node = copyNode(nv.Node)
		nv.Free = slices.Clone(nv.Free)
		nv.FreeCPUs = slices.Clone(nv.FreeCPUs)
	}
	for addr, ports := range c.UsedPorts {
		c.UsedPorts[addr] = maps.Clone(ports)
	}
	return c
}

// copyNode copies a node record with every list it holds.
func copyNode(n *domain.Node) *domain.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.NUMA = slices.Clone(n.NUMA)
	for i := range c.NUMA {
		d := &c.NUMA[i]
		d.GPUs, d.CPUs, d.NICs = slices.Clone(d.GPUs), slices.Clone(d.CPUs), slices.Clone(d.NICs)
	}
	c.GPUDistance = slices.Clone(n.GPUDistance)
	for i := range c.GPUDistance {
		c.GPUDistance[i] = slices.Clone(c.GPUDistance[i])
	}
	c.Unhealthy = slices.Clone(n.Unhealthy)
	return &c
}
