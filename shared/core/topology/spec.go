package topology

import (
	"maps"
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// Spec is the plain-data form of a topology: what every loader produces, what
// New consumes, and what a Topology serialises to, so that a placement
// snapshot carrying a topology can be replayed from JSON. Node lists hold
// expanded names, not hostlist expressions.
//
// The YAML topology file (LoadYAML) decodes into the same types, with
// hostlist expressions in its lists until LoadYAML expands them.
type Spec struct {
	Switches []SwitchSpec `json:"switches" yaml:"switches"`
	Blocks   []BlockSpec  `json:"blocks,omitempty" yaml:"blocks"`
}

// SwitchSpec is one switch. It lists child switches or nodes, never both: a
// switch with no child switches is a leaf (ToR) and is where nodes attach.
type SwitchSpec struct {
	Name     string   `json:"name" yaml:"name"`
	Children []string `json:"children,omitempty" yaml:"children"`
	Nodes    []string `json:"nodes,omitempty" yaml:"nodes"`
}

// BlockSpec is one block: nodes sharing an interconnect of their own (an
// NVLink domain such as an NVL72 rack), like Slurm's topology/block. Blocks
// are independent of the switch tree; a node is in at most one block.
type BlockSpec struct {
	Name  string   `json:"name" yaml:"name"`
	Nodes []string `json:"nodes" yaml:"nodes"`
}

// Validate reports the first way s fails to describe a forest of switches:
// an empty or duplicate name, an unknown child switch, a switch with two
// parents, a cycle, a switch with both child switches and nodes, a node under
// two leaves (or twice under one), or a node in two blocks. The error is
// marked errs.ErrInvalidSpec.
//
// Validation lives on the Spec rather than the Topology because New is the
// only way to obtain a Topology and it refuses invalid input: a Topology is
// valid by construction.
func (s Spec) Validate() error {
	_, err := New(s)
	return err
}

// New validates s (see Validate) and indexes it for lookups.
func New(s Spec) (*Topology, error) {
	t, err := build(s)
	if err != nil {
		return nil, errs.MarkInvalid(errors.Wrap(err, "invalid topology"))
	}
	return t, nil
}

func build(s Spec) (*Topology, error) {
	t := &Topology{
		switches:  make(map[string]*switchInfo, len(s.Switches)),
		nodeLeaf:  make(map[string]string),
		nodeBlock: make(map[string]string),
		blocks:    make(map[string][]string, len(s.Blocks)),
	}
	for i, sw := range s.Switches {
		switch {
		case sw.Name == "":
			return nil, errors.Newf("switch #%d has no name", i+1)
		case t.switches[sw.Name] != nil:
			return nil, errors.Newf("duplicate switch %q", sw.Name)
		case len(sw.Children) > 0 && len(sw.Nodes) > 0:
			return nil, errors.Newf("switch %q lists both child switches and nodes; only a leaf switch has nodes", sw.Name)
		}
		t.switches[sw.Name] = &switchInfo{name: sw.Name, children: sorted(sw.Children), nodes: sorted(sw.Nodes)}
	}
	// Links are checked in Spec order so the first error reported is the
	// first one an operator reading the file top-down would meet.
	for _, sw := range s.Switches {
		for _, c := range sw.Children {
			child := t.switches[c]
			switch {
			case child == nil:
				return nil, errors.Newf("switch %q: unknown child switch %q", sw.Name, c)
			case child.parent == sw.Name:
				return nil, errors.Newf("switch %q lists child %q twice", sw.Name, c)
			case child.parent != "":
				return nil, errors.Newf("switch %q is a child of both %q and %q", c, child.parent, sw.Name)
			}
			child.parent = sw.Name
		}
		for _, n := range sw.Nodes {
			switch prev, seen := t.nodeLeaf[n]; {
			case n == "":
				return nil, errors.Newf("switch %q lists an empty node name", sw.Name)
			case seen && prev == sw.Name:
				return nil, errors.Newf("switch %q lists node %q twice", sw.Name, n)
			case seen:
				return nil, errors.Newf("node %q is under two leaf switches, %q and %q", n, prev, sw.Name)
			}
			t.nodeLeaf[n] = sw.Name
		}
	}
	if err := t.checkAcyclic(); err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(t.switches))
	for _, name := range names {
		if sw := t.switches[name]; sw.parent == "" {
			t.roots = append(t.roots, name)
			t.index(sw, nil)
		}
	}
	for _, name := range names {
		sw := t.switches[name]
		if len(sw.children) == 0 {
			t.leaves = append(t.leaves, name)
		}
		t.height = max(t.height, sw.level+1)
	}
	return t, t.addBlocks(s.Blocks)
}

// checkAcyclic walks up from every switch. Each switch has at most one parent
// by now, so a walk that meets a switch already on its own path is a cycle;
// a cycle has no root, so index would never reach it.
func (t *Topology) checkAcyclic() error {
	const onPath, done = 1, 2
	state := make(map[string]int, len(t.switches))
	for _, name := range slices.Sorted(maps.Keys(t.switches)) {
		var path []string
		cur := name
		for cur != "" && state[cur] == 0 {
			state[cur] = onPath
			path = append(path, cur)
			cur = t.switches[cur].parent
		}
		if cur != "" && state[cur] == onPath {
			cycle := append(path[slices.Index(path, cur):], cur)
			return errors.Newf("switch cycle (each is a child of the next): %s", strings.Join(cycle, " -> "))
		}
		for _, p := range path {
			state[p] = done
		}
	}
	return nil
}

// index fills in the derived fields of sw and its subtree: path to the root,
// depth, level (height above the leaves) and the sorted nodes beneath.
func (t *Topology) index(sw *switchInfo, parentPath []string) {
	sw.path = append([]string{sw.name}, parentPath...)
	under := slices.Clone(sw.nodes)
	for _, c := range sw.children {
		child := t.switches[c]
		t.index(child, sw.path)
		// A switch's level is one above its highest child, as in Slurm, so
		// in an uneven tree a level always means "at least this far up".
		sw.level = max(sw.level, child.level+1)
		under = append(under, child.under...)
	}
	slices.Sort(under)
	sw.under = under
}

func (t *Topology) addBlocks(blocks []BlockSpec) error {
	for i, b := range blocks {
		if b.Name == "" {
			return errors.Newf("block #%d has no name", i+1)
		}
		if _, dup := t.blocks[b.Name]; dup {
			return errors.Newf("duplicate block %q", b.Name)
		}
		for _, n := range b.Nodes {
			switch prev, seen := t.nodeBlock[n]; {
			case n == "":
				return errors.Newf("block %q lists an empty node name", b.Name)
			case seen && prev == b.Name:
				return errors.Newf("block %q lists node %q twice", b.Name, n)
			case seen:
				return errors.Newf("node %q is in two blocks, %q and %q", n, prev, b.Name)
			}
			t.nodeBlock[n] = b.Name
		}
		t.blocks[b.Name] = sorted(b.Nodes)
		t.blockNames = append(t.blockNames, b.Name)
	}
	slices.Sort(t.blockNames)
	return nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
