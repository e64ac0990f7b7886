package placetest

import (
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// NodeBuilder builds a place.NodeView: up, idle, 8 GPUs, 64 cores, no
// labels, no NUMA layout unless set.
type NodeBuilder struct {
	nv      place.NodeView
	used    []int
	sockets int
}

// MakeNode starts a node.
func MakeNode(name string) *NodeBuilder {
	return &NodeBuilder{nv: place.NodeView{
		Node: &domain.Node{Name: name, Addr: name, GPUs: 8, CPUs: 64},
		Up:   true,
	}}
}

// GPUs sets the GPU count.
func (b *NodeBuilder) GPUs(n int) *NodeBuilder { b.nv.Node.GPUs = n; return b }

// CPUs sets the core count.
func (b *NodeBuilder) CPUs(n int) *NodeBuilder { b.nv.Node.CPUs = n; return b }

// GPUModel sets the GPUs' model and memory, as discovery reports them.
func (b *NodeBuilder) GPUModel(name string, memoryMiB int64) *NodeBuilder {
	b.nv.Node.GPUModel, b.nv.Node.GPUMemoryMiB = name, memoryMiB
	return b
}

// Runtime says the node's agent runs container jobs through engine.
func (b *NodeBuilder) Runtime(engine string) *NodeBuilder {
	b.nv.Node.ContainerRuntime = engine
	return b
}

// PairedGPUs links GPUs 2k and 2k+1 by an NVLink bridge and every other
// pair across the host (SYS), as on a PCIe server with NVLink bridges.
func (b *NodeBuilder) PairedGPUs() *NodeBuilder {
	n := b.nv.Node.GPUs
	d := make([][]int, n)
	for x := range d {
		d[x] = make([]int, n)
		for y := range d[x] {
			switch {
			case x == y:
				d[x][y] = domain.LinkSame
			case x/2 == y/2:
				d[x][y] = domain.LinkNVLink
			default:
				d[x][y] = domain.LinkSys
			}
		}
	}
	b.nv.Node.GPUDistance = d
	return b
}

// Addr sets the node's address (default: its name).
func (b *NodeBuilder) Addr(a string) *NodeBuilder { b.nv.Node.Addr = a; return b }

// Leaf sets the leaf label.
func (b *NodeBuilder) Leaf(l string) *NodeBuilder { b.nv.Node.Leaf = l; return b }

// Spine sets the spine label.
func (b *NodeBuilder) Spine(s string) *NodeBuilder { b.nv.Node.Spine = s; return b }

// Block sets the block label.
func (b *NodeBuilder) Block(bl string) *NodeBuilder { b.nv.Node.Block = bl; return b }

// Sockets splits GPUs and cores evenly over n NUMA nodes, in index order
// (8 GPUs, 64 cores, 2 sockets: GPUs 0-3 and cores 0-31 on NUMA 0).
func (b *NodeBuilder) Sockets(n int) *NodeBuilder { b.sockets = n; return b }

// NUMA sets an explicit layout.
func (b *NodeBuilder) NUMA(doms ...domain.NUMANode) *NodeBuilder {
	b.nv.Node.NUMA, b.sockets = doms, 0
	return b
}

// Used takes the first n GPUs (0..n-1).
func (b *NodeBuilder) Used(n int) *NodeBuilder {
	for g := range n {
		b.used = append(b.used, g)
	}
	return b
}

// UsedGPUs takes exactly the listed GPU indices.
func (b *NodeBuilder) UsedGPUs(gpus ...int) *NodeBuilder { b.used = append(b.used, gpus...); return b }

// FreeCPUs tracks cores: exactly these are free.
func (b *NodeBuilder) FreeCPUs(cpus ...int) *NodeBuilder {
	b.nv.FreeCPUs = append([]int{}, cpus...)
	return b
}

// Down marks the node's agent as gone.
func (b *NodeBuilder) Down() *NodeBuilder { b.nv.Up = false; return b }

// Drained marks the node as draining.
func (b *NodeBuilder) Drained() *NodeBuilder { b.nv.Drained = true; return b }

// Obj returns the node view, with a record of its own: later calls on
// the builder change no view it returned.
func (b *NodeBuilder) Obj() place.NodeView {
	nv := b.nv
	nv.Node = copyNode(b.nv.Node)
	n := nv.Node
	if b.sockets > 0 {
		n.NUMA = nil
		for s := range b.sockets {
			n.NUMA = append(n.NUMA, domain.NUMANode{
				ID:   s,
				GPUs: span(s*n.GPUs/b.sockets, (s+1)*n.GPUs/b.sockets),
				CPUs: span(s*n.CPUs/b.sockets, (s+1)*n.CPUs/b.sockets),
			})
		}
	}
	nv.Free = nil
	for g := range n.GPUs {
		if !slices.Contains(b.used, g) && !n.WithdrawnGPUs()[g] {
			nv.Free = append(nv.Free, g)
		}
	}
	if nv.Free == nil {
		nv.Free = []int{}
	}
	return nv
}

func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
