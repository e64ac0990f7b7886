package place

import (
	"slices"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// index is what Place derives from a snapshot's node identities, labels
// and topology file: the resolved switch tree in a compact form (switches
// numbered in depth-first order, so the leaves under any switch are one
// contiguous range), node-to-leaf and node-to-block maps, and each node's
// NUMA layout. It is immutable once built, except for the capacity cache,
// which has its own lock, so clones of a snapshot share it.
type index struct {
	fp     []nodeFP
	file   *topology.Topology
	topo   *topology.Topology // resolved; never nil
	err    error              // resolving the topology failed
	byName map[string]int32

	// sw[0] is a virtual root above every tree and above every node the
	// topology does not place; such a node hangs under a pseudo-leaf of its
	// own, so it counts as a separate leaf (the pessimistic choice, as in
	// topology.LowestCommonLevel).
	sw      []swInfo
	leafSeq []int32 // leaf switches in depth-first order
	leafOf  []int32 // node -> leaf switch
	// A node's spine domain is its leaf's parent switch, or the leaf itself
	// when the leaf has no parent; a gang is within one spine when all its
	// nodes share the domain. In an uneven tree a switch's subtree may hold
	// leaves of other domains (deeper ones), hence the explicit lists.
	spineOf   []int32   // switch -> its spine domain (leaves only, else -1)
	spineDoms []int32   // distinct spine domains, depth-first order
	spineLvs  [][]int32 // per spine domain: the leaves whose domain it is
	blockOf   []int32   // node -> block, or -1
	// total is, per switch, the nodes beneath it: a domain is whole (every
	// node idle) when that many of its nodes are (evaluation.idle).
	total  []int32
	blocks []blockInfo
	nodes  []nodeStatic

	mu       sync.Mutex
	capCache map[Shape]*evaluation
	// evals recycles the buffers of evaluations on current state, which
	// live for one Place call: at 10,000 nodes they are most of what a
	// decision allocates.
	evals sync.Pool
}

type swInfo struct {
	name     string
	parent   int32 // -1 for the virtual root
	children []int32
	level    int32
	depth    int32
	lo, hi   int32   // leafSeq[lo:hi] are the leaves beneath
	nodes    []int32 // leaves only: the snapshot's nodes attached, by name
	pseudo   bool    // stands for one node outside the topology
	hash     uint64
}

type blockInfo struct {
	name  string
	nodes []int32
}

// nodeFP is what the index depends on for one node; see matches.
type nodeFP struct {
	name, leaf, spine, block string
	gpus, cpus, numa         int
	epoch                    int64
}

// nodeStatic is a node's fixed layout. A node without NUMA information is
// one NUMA domain holding all its GPUs and its CPUs cores.
type nodeStatic struct {
	hash    uint64
	doms    []numaDom
	gpuDom  []int8  // GPU index -> domain, -1 when in none
	cpuDom  []int16 // core -> domain, -1 when in none
	domGPUs []int32 // per domain: GPUs
	domCPUs []int32 // per domain: cores
}

type numaDom struct {
	id         int
	gpus, cpus []int // sorted
}

func fingerprint(nv *NodeView) nodeFP {
	n := nv.Node
	return nodeFP{n.Name, n.Leaf, n.Spine, n.Block, n.GPUs, n.CPUs, len(n.NUMA), n.Epoch}
}

// matches reports whether x was built from a snapshot with the same nodes,
// in the same order, with the same labels and layout sizes, and the same
// topology file. A caller that edits a node's NUMA layout in place without
// changing these must build a new Snapshot.
func (x *index) matches(s *Snapshot) bool {
	if x.file != s.Topology || len(x.fp) != len(s.Nodes) {
		return false
	}
	for i := range s.Nodes {
		if x.fp[i] != fingerprint(&s.Nodes[i]) {
			return false
		}
	}
	return true
}

// prepared returns the snapshot's index, rebuilding it when stale.
func (s *Snapshot) prepared() *index {
	if s.idx == nil || !s.idx.matches(s) {
		s.idx = buildIndex(s)
	}
	return s.idx
}

// Prepare builds the snapshot's derived index now (Place would do it on
// first use) and reports a topology that cannot be resolved: node labels
// that contradict each other, or that contradict the topology file.
func (s *Snapshot) Prepare() error { return s.prepared().err }

// ResolvedTopology is the topology Place uses: the file merged with the
// node labels.
func (s *Snapshot) ResolvedTopology() (*topology.Topology, error) {
	x := s.prepared()
	return x.topo, x.err
}

func buildIndex(s *Snapshot) *index {
	x := &index{
		file:     s.Topology,
		fp:       make([]nodeFP, len(s.Nodes)),
		byName:   make(map[string]int32, len(s.Nodes)),
		leafOf:   make([]int32, len(s.Nodes)),
		blockOf:  make([]int32, len(s.Nodes)),
		nodes:    make([]nodeStatic, len(s.Nodes)),
		capCache: map[Shape]*evaluation{},
	}
	labels := make([]topology.NodeLabels, 0, len(s.Nodes))
	for i := range s.Nodes {
		nv := &s.Nodes[i]
		x.fp[i] = fingerprint(nv)
		x.byName[nv.Node.Name] = int32(i)
		x.leafOf[i], x.blockOf[i] = -1, -1
		x.nodes[i] = layout(nv)
		n := nv.Node
		if n.Leaf != "" || n.Spine != "" || n.Block != "" {
			labels = append(labels, topology.NodeLabels{Name: n.Name, Leaf: n.Leaf, Spine: n.Spine, Block: n.Block})
		}
	}
	x.topo, x.err = resolve(s.Topology, labels)
	x.buildTree()
	for _, b := range x.topo.Blocks() {
		bi := blockInfo{name: b}
		for _, name := range x.topo.BlockNodes(b) {
			if i, ok := x.byName[name]; ok {
				bi.nodes = append(bi.nodes, i)
				x.blockOf[i] = int32(len(x.blocks))
			}
		}
		x.blocks = append(x.blocks, bi)
	}
	return x
}

// resolve merges the file with the labels. On error it falls back to the
// file alone (or nothing), and Place reports the error.
func resolve(file *topology.Topology, labels []topology.NodeLabels) (*topology.Topology, error) {
	fallback := file
	if fallback == nil {
		fallback = &topology.Topology{}
	}
	var fromLabels *topology.Topology
	if len(labels) > 0 {
		t, err := topology.FromLabels(labels)
		if err != nil {
			return fallback, err
		}
		fromLabels = t
	}
	if file == nil {
		if fromLabels == nil {
			return fallback, nil
		}
		return fromLabels, nil
	}
	if fromLabels == nil {
		return file, nil
	}
	t, err := topology.Merge(file, fromLabels)
	if err != nil {
		return fallback, err
	}
	return t, nil
}

func (x *index) buildTree() {
	t := x.topo
	x.sw = append(x.sw, swInfo{name: "", parent: -1, level: int32(max(t.Height(), 1))})
	var visit func(name string, parent int32)
	visit = func(name string, parent int32) {
		id := int32(len(x.sw))
		x.sw = append(x.sw, swInfo{
			name: name, parent: parent, level: int32(t.Level(name)),
			depth: x.sw[parent].depth + 1, hash: hashString(name),
		})
		x.sw[parent].children = append(x.sw[parent].children, id)
		lo := int32(len(x.leafSeq))
		if kids := t.Children(name); len(kids) > 0 {
			for _, c := range kids {
				visit(c, id)
			}
		} else {
			x.leafSeq = append(x.leafSeq, id)
			for _, n := range t.Nodes(name) {
				if i, ok := x.byName[n]; ok {
					x.sw[id].nodes = append(x.sw[id].nodes, i)
					x.leafOf[i] = id
				}
			}
		}
		x.sw[id].lo, x.sw[id].hi = lo, int32(len(x.leafSeq))
	}
	for _, r := range t.Roots() {
		visit(r, 0)
	}
	// Nodes the topology does not place, in snapshot order.
	for i := range x.leafOf {
		if x.leafOf[i] >= 0 {
			continue
		}
		id := int32(len(x.sw))
		x.sw = append(x.sw, swInfo{
			name: x.fp[i].name, parent: 0, depth: 1, pseudo: true,
			lo: int32(len(x.leafSeq)), hi: int32(len(x.leafSeq)) + 1,
			nodes: []int32{int32(i)}, hash: hashString(x.fp[i].name),
		})
		x.sw[0].children = append(x.sw[0].children, id)
		x.leafSeq = append(x.leafSeq, id)
		x.leafOf[i] = id
	}
	x.sw[0].lo, x.sw[0].hi = 0, int32(len(x.leafSeq))

	x.total = make([]int32, len(x.sw))
	for s := len(x.sw) - 1; s >= 0; s-- {
		x.total[s] += int32(len(x.sw[s].nodes))
		if p := x.sw[s].parent; p >= 0 {
			x.total[p] += x.total[s]
		}
	}

	x.spineOf = make([]int32, len(x.sw))
	seen := make(map[int32]int)
	for i := range x.spineOf {
		x.spineOf[i] = -1
	}
	for _, leaf := range x.leafSeq {
		dom := leaf
		if p := x.sw[leaf].parent; p > 0 {
			dom = p
		}
		x.spineOf[leaf] = dom
		k, ok := seen[dom]
		if !ok {
			k = len(x.spineDoms)
			seen[dom] = k
			x.spineDoms = append(x.spineDoms, dom)
			x.spineLvs = append(x.spineLvs, nil)
		}
		x.spineLvs[k] = append(x.spineLvs[k], leaf)
	}
}

// layout normalizes a node's NUMA description.
func layout(nv *NodeView) nodeStatic {
	n := nv.Node
	st := nodeStatic{hash: hashString(n.Name)}
	if len(n.NUMA) == 0 {
		st.doms = []numaDom{{id: 0, gpus: seq(n.GPUs), cpus: seq(n.CPUs)}}
	} else {
		for _, d := range n.NUMA {
			g, c := slices.Clone(d.GPUs), slices.Clone(d.CPUs)
			slices.Sort(g)
			slices.Sort(c)
			st.doms = append(st.doms, numaDom{id: d.ID, gpus: g, cpus: c})
		}
	}
	maxG, maxC := n.GPUs-1, -1
	for _, d := range st.doms {
		for _, g := range d.gpus {
			maxG = max(maxG, g)
		}
		for _, c := range d.cpus {
			maxC = max(maxC, c)
		}
	}
	st.gpuDom = make([]int8, maxG+1)
	st.cpuDom = make([]int16, maxC+1)
	for i := range st.gpuDom {
		st.gpuDom[i] = -1
	}
	for i := range st.cpuDom {
		st.cpuDom[i] = -1
	}
	st.domGPUs, st.domCPUs = make([]int32, len(st.doms)), make([]int32, len(st.doms))
	for di, d := range st.doms {
		st.domGPUs[di], st.domCPUs[di] = int32(len(d.gpus)), int32(len(d.cpus))
		for _, g := range d.gpus {
			if g >= 0 {
				st.gpuDom[g] = int8(di)
			}
		}
		for _, c := range d.cpus {
			if c >= 0 {
				st.cpuDom[c] = int16(di)
			}
		}
	}
	return st
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix derives a tie-break key from the decision's seed and a name hash
// (splitmix64 finalizer): equal candidates are ordered pseudo-randomly but
// reproducibly.
func mix(seed, h uint64) uint64 {
	z := seed ^ h + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
