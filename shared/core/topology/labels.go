package topology

import (
	"maps"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// RootName is the synthetic switch FromLabels puts above the top-level
// switches when there are several, so that all labelled nodes share a tree.
const RootName = "root"

// NodeLabels is what an agent reports about a node's place in the network.
// Empty fields are unknown.
type NodeLabels struct {
	Name  string
	Leaf  string // ToR switch
	Spine string // the leaf's parent
	Block string // NVLink domain or similar
}

// FromLabels builds a topology from agent labels: each node under its Leaf,
// each Leaf under its Spine, and, when that leaves several top-level switches
// (several spines, or leaves without a spine), all of them under a synthetic
// RootName switch. A node without a Leaf is left out of the tree (but may
// still be in a block). Nodes must agree: a leaf reported under two spines is
// an error.
func FromLabels(nodes []NodeLabels) (*Topology, error) {
	t, err := fromLabels(nodes)
	if err != nil {
		return nil, errs.MarkInvalid(errors.Wrap(err, "building topology from node labels"))
	}
	return t, nil
}

func fromLabels(nodes []NodeLabels) (*Topology, error) {
	b := newSpecBuilder()
	spineOf := make(map[string]string) // leaf -> spine, "" for none
	reporter := make(map[string]string)
	for _, n := range nodes {
		if n.Name == "" {
			return nil, errors.New("a node has no name")
		}
		if n.Block != "" {
			b.addBlockNode(n.Block, n.Name)
		}
		if n.Leaf == "" {
			if n.Spine != "" {
				return nil, errors.Newf("node %q has a spine label but no leaf label", n.Name)
			}
			continue
		}
		if prev, seen := spineOf[n.Leaf]; seen && prev != n.Spine {
			return nil, errors.Newf("leaf %q is under spine %q according to node %q but %q according to node %q",
				n.Leaf, prev, reporter[n.Leaf], n.Spine, n.Name)
		}
		spineOf[n.Leaf], reporter[n.Leaf] = n.Spine, n.Name
		b.addNode(n.Leaf, n.Name)
		if n.Spine != "" {
			b.addChild(n.Spine, n.Leaf)
		}
	}
	if tops := b.tops(); len(tops) > 1 {
		if b.has(RootName) {
			return nil, errors.Newf("a label uses the name %q, which is reserved for the synthetic root", RootName)
		}
		for _, top := range tops {
			b.addChild(RootName, top)
		}
	}
	return New(b.spec())
}

// Merge combines a topology file with agent labels, the file winning where
// both say something. For each node, placement in the switch tree and block
// membership are decided separately:
//   - a node in the file's tree keeps its file placement; a node only in the
//     labels' tree is attached to its labelled leaf. Of the switches on its
//     labelled path, those the file already has are used as they are in the
//     file; the missing ones are added below the first one the file has (or
//     as a new tree when the file has none of them);
//   - a node in one of the file's blocks stays there; otherwise it joins its
//     labelled block.
//
// A nil argument stands for an empty topology.
func Merge(file, labels *Topology) (*Topology, error) {
	if file == nil {
		file = &Topology{}
	}
	if labels == nil {
		labels = &Topology{}
	}
	b := builderFrom(file.Spec())
	for _, node := range slices.Sorted(maps.Keys(labels.nodeLeaf)) {
		if _, inFile := file.nodeLeaf[node]; inFile {
			continue
		}
		if err := attach(b, node, labels.Path(node)); err != nil {
			return nil, errs.MarkInvalid(errors.Wrap(err, "merging node labels into the topology file"))
		}
	}
	for _, node := range slices.Sorted(maps.Keys(labels.nodeBlock)) {
		if _, inFile := file.nodeBlock[node]; !inFile {
			b.addBlockNode(labels.nodeBlock[node], node)
		}
	}
	t, err := New(b.spec())
	if err != nil {
		return nil, errors.Wrap(err, "merging node labels into the topology file")
	}
	return t, nil
}

// attach adds node to b along path (leaf first), reusing the switches b
// already has from the first one found upward.
func attach(b *specBuilder, node string, path []string) error {
	known := slices.IndexFunc(path, b.has)
	if known == 0 {
		if leaf := b.switches.byName[path[0]]; len(leaf.Children) > 0 {
			return errors.Newf("labels put node %q on leaf %q, which the file defines as a switch with child switches", node, path[0])
		}
		b.addNode(path[0], node)
		return nil
	}
	if known > 0 && len(b.switches.byName[path[known]].Nodes) > 0 {
		return errors.Newf("labels put switch %q under %q, which the file defines as a leaf with nodes", path[known-1], path[known])
	}
	if known < 0 {
		known = len(path) - 1 // none known: the whole labelled path is new
	}
	b.addNode(path[0], node)
	for i := 1; i <= known; i++ {
		b.addChild(path[i], path[i-1])
	}
	return nil
}
