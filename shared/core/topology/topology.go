package topology

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/cockroachdb/errors"
)

// Topology is an immutable, validated forest of switches plus blocks, indexed
// for the lookups a scheduler makes per candidate node. Build one with New or
// a loader. The zero Topology is empty: every lookup reports "not present".
// Methods do not modify it, so it is safe for concurrent use.
type Topology struct {
	switches   map[string]*switchInfo
	roots      []string // sorted
	leaves     []string // sorted
	height     int      // number of switch levels
	nodeLeaf   map[string]string
	nodeBlock  map[string]string
	blocks     map[string][]string // block -> sorted nodes
	blockNames []string            // sorted
}

type switchInfo struct {
	name     string
	parent   string   // "" for a root
	children []string // sorted
	nodes    []string // directly attached, sorted; only leaves have nodes
	level    int      // 0 for a leaf, else 1 + highest child level
	path     []string // this switch first, its root last
	under    []string // every node beneath, sorted
}

// Leaf returns the leaf switch the node is attached to.
func (t *Topology) Leaf(node string) (string, bool) {
	leaf, ok := t.nodeLeaf[node]
	return leaf, ok
}

// Path returns the switches above the node, its leaf first and its root last,
// or nil when the node is not in the tree.
func (t *Topology) Path(node string) []string {
	leaf, ok := t.nodeLeaf[node]
	if !ok {
		return nil
	}
	return slices.Clone(t.switches[leaf].path)
}

// Block returns the block the node belongs to.
func (t *Topology) Block(node string) (string, bool) {
	b, ok := t.nodeBlock[node]
	return b, ok
}

// Level returns the switch's level: 0 for a leaf, one more than its highest
// child otherwise. It returns -1 for an unknown switch.
func (t *Topology) Level(switchName string) int {
	sw, ok := t.switches[switchName]
	if !ok {
		return -1
	}
	return sw.level
}

// Height returns the number of switch levels (the highest level plus one), 0
// for an empty topology. It is also what LowestCommonLevel reports for nodes
// that share no switch.
func (t *Topology) Height() int { return t.height }

// Nodes returns every node beneath the switch, sorted; nil for an unknown
// switch.
func (t *Topology) Nodes(switchName string) []string {
	if sw, ok := t.switches[switchName]; ok {
		return slices.Clone(sw.under)
	}
	return nil
}

// Children returns the switch's child switches, sorted.
func (t *Topology) Children(switchName string) []string {
	if sw, ok := t.switches[switchName]; ok {
		return slices.Clone(sw.children)
	}
	return nil
}

// Leaves returns the leaf switches (those without child switches), sorted.
func (t *Topology) Leaves() []string { return slices.Clone(t.leaves) }

// Roots returns the switches without a parent, sorted. A single tree has one.
func (t *Topology) Roots() []string { return slices.Clone(t.roots) }

// Blocks returns the block names, sorted.
func (t *Topology) Blocks() []string { return slices.Clone(t.blockNames) }

// BlockNodes returns the nodes of a block, sorted; nil for an unknown block.
func (t *Topology) BlockNodes(block string) []string { return slices.Clone(t.blocks[block]) }

// LowestCommonLevel returns the level of the lowest switch that every given
// node sits beneath, i.e. the highest level their traffic must cross: 0 when
// they share a leaf, 1 when they share a leaf's parent, and so on. Repeated
// names count once.
//
// It returns -1 when there are fewer than two distinct nodes (nothing to
// cross), and Height() when any node is outside the tree or the nodes are in
// separate trees: one above every real level, so a scorer preferring lower
// values ranks such a set last. In an empty topology Height() is 0, so every
// set scores alike; a filter requiring "at most level L" must itself reject
// an L the topology does not have.
func (t *Topology) LowestCommonLevel(nodes []string) int {
	var lca *switchInfo
	distinct := 0
	seen := make(map[string]bool, len(nodes))
	unknown := false
	for _, n := range nodes {
		if seen[n] {
			continue
		}
		seen[n] = true
		distinct++
		leaf, ok := t.nodeLeaf[n]
		switch {
		case !ok:
			unknown = true
		case lca == nil:
			lca = t.switches[leaf]
		default:
			lca = t.commonAncestor(lca, t.switches[leaf])
			if lca == nil {
				unknown = true
			}
		}
	}
	switch {
	case distinct < 2:
		return -1
	case unknown:
		return t.height
	default:
		return lca.level
	}
}

// commonAncestor returns the lowest switch above (or equal to) both a and b,
// or nil when they are in different trees. Paths run to the root, so the
// common part is a shared suffix.
func (t *Topology) commonAncestor(a, b *switchInfo) *switchInfo {
	pa, pb := a.path, b.path
	var common string
	for i, j := len(pa)-1, len(pb)-1; i >= 0 && j >= 0 && pa[i] == pb[j]; i, j = i-1, j-1 {
		common = pa[i]
	}
	if common == "" {
		return nil
	}
	return t.switches[common]
}

// Spec returns the plain-data form of t, everything in name order, such that
// New(t.Spec()) rebuilds an equal Topology.
func (t *Topology) Spec() Spec {
	var s Spec
	for _, name := range slices.Sorted(maps.Keys(t.switches)) {
		sw := t.switches[name]
		s.Switches = append(s.Switches, SwitchSpec{
			Name:     name,
			Children: slices.Clone(sw.children),
			Nodes:    slices.Clone(sw.nodes),
		})
	}
	for _, b := range t.blockNames {
		s.Blocks = append(s.Blocks, BlockSpec{Name: b, Nodes: slices.Clone(t.blocks[b])})
	}
	return s
}

// MarshalJSON encodes t as its Spec, so snapshots that embed a topology stay
// replayable.
func (t *Topology) MarshalJSON() ([]byte, error) { return json.Marshal(t.Spec()) }

// UnmarshalJSON decodes a Spec and validates it like New.
func (t *Topology) UnmarshalJSON(data []byte) error {
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.Wrap(err, "decoding topology")
	}
	built, err := New(s)
	if err != nil {
		return err
	}
	*t = *built
	return nil
}
