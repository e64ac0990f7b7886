// Package fabric builds the simulated clusters of the load test and the
// simulator: nodes with leaf and spine labels, either on a generated
// leaf/spine tree or cut from a real topology (the Alibaba Lingjun Clos of
// ../shared/traces), plus the lookups the simulator's metrics need (which
// leaf and spine a node is under, the fewest leaves a gang could use).
package fabric

import (
	"fmt"
	"slices"
	"sort"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// Cluster is a set of nodes on a two-level switch tree (leaves under
// spines; a core above the spines is implied).
type Cluster struct {
	// Name describes the cluster's shape for reports.
	Name  string
	Nodes []domain.Node
	// LeafOf and SpineOf index Leaves and Spines per node (same order as
	// Nodes).
	LeafOf, SpineOf []int
	Leaves, Spines  []string
	// LeafSize is the number of nodes under each leaf.
	LeafSize []int

	byName map[string]int
}

// GPUs is the cluster's GPU count.
func (c *Cluster) GPUs() int {
	n := 0
	for _, nd := range c.Nodes {
		n += nd.GPUs
	}
	return n
}

// Index returns a node's position, or -1.
func (c *Cluster) Index(name string) int {
	if i, ok := c.byName[name]; ok {
		return i
	}
	return -1
}

// Span counts the distinct leaves and spines the named nodes are under.
// Unknown names are ignored.
func (c *Cluster) Span(nodes []string) (leaves, spines int) {
	// Gangs are small: a linear scan beats maps.
	var ls, ss [16]int
	lv, sv := ls[:0], ss[:0]
	for _, n := range nodes {
		i := c.Index(n)
		if i < 0 {
			continue
		}
		if !slices.Contains(lv, c.LeafOf[i]) {
			lv = append(lv, c.LeafOf[i])
		}
		if !slices.Contains(sv, c.SpineOf[i]) {
			sv = append(sv, c.SpineOf[i])
		}
	}
	return len(lv), len(sv)
}

// MinLeaves is the fewest leaves that hold n nodes on the idle cluster
// (the largest leaves first), or -1 when the cluster has fewer nodes.
func (c *Cluster) MinLeaves(n int) int {
	sizes := slices.Clone(c.LeafSize)
	sort.Sort(sort.Reverse(sort.IntSlice(sizes)))
	sum := 0
	for i, s := range sizes {
		sum += s
		if sum >= n {
			return i + 1
		}
	}
	return -1
}

// Unlabelled returns the nodes without topology labels: what a
// topology-blind scheduler sees.
func (c *Cluster) Unlabelled() []domain.Node {
	out := slices.Clone(c.Nodes)
	for i := range out {
		out[i].Leaf, out[i].Spine, out[i].Block = "", "", ""
	}
	return out
}

func (c *Cluster) index() {
	c.byName = make(map[string]int, len(c.Nodes))
	leafIdx, spineIdx := map[string]int{}, map[string]int{}
	c.LeafOf, c.SpineOf = make([]int, len(c.Nodes)), make([]int, len(c.Nodes))
	for i, n := range c.Nodes {
		c.byName[n.Name] = i
		li, ok := leafIdx[n.Leaf]
		if !ok {
			li = len(c.Leaves)
			leafIdx[n.Leaf] = li
			c.Leaves = append(c.Leaves, n.Leaf)
			c.LeafSize = append(c.LeafSize, 0)
		}
		c.LeafSize[li]++
		si, ok := spineIdx[n.Spine]
		if !ok {
			si = len(c.Spines)
			spineIdx[n.Spine] = si
			c.Spines = append(c.Spines, n.Spine)
		}
		c.LeafOf[i], c.SpineOf[i] = li, si
	}
}

// Generated is a leaf/spine tree: nodes named <prefix>-NNNNN, NodesPerLeaf
// to a leaf, LeavesPerSpine leaves to a spine (the last ones possibly
// short), GPUs each.
type Generated struct {
	Nodes, NodesPerLeaf, LeavesPerSpine, GPUs int
	Prefix                                    string
}

// Build lays out the nodes.
func (g Generated) Build() (*Cluster, error) {
	switch {
	case g.Nodes < 1:
		return nil, errors.Newf("nodes %d: need at least one", g.Nodes)
	case g.NodesPerLeaf < 1 || g.LeavesPerSpine < 1:
		return nil, errors.Newf("nodes per leaf %d, leaves per spine %d: need at least one", g.NodesPerLeaf, g.LeavesPerSpine)
	case g.GPUs < 1 || g.GPUs > 64:
		return nil, errors.Newf("GPUs per node %d: not between 1 and 64", g.GPUs)
	}
	prefix := g.Prefix
	if prefix == "" {
		prefix = "n"
	}
	c := &Cluster{Name: fmt.Sprintf("generated: %d nodes × %d GPUs, %d nodes per leaf, %d leaves per spine",
		g.Nodes, g.GPUs, g.NodesPerLeaf, g.LeavesPerSpine)}
	for i := range g.Nodes {
		leaf := i / g.NodesPerLeaf
		name := fmt.Sprintf("%s-%05d", prefix, i+1)
		c.Nodes = append(c.Nodes, node(name, g.GPUs, fmt.Sprintf("leaf-%03d", leaf+1), fmt.Sprintf("spine-%02d", leaf/g.LeavesPerSpine+1)))
	}
	c.index()
	return c, nil
}

func node(name string, gpus int, leaf, spine string) domain.Node {
	return domain.Node{Name: name, Addr: name, GPUs: gpus, CPUs: 8 * gpus, Leaf: leaf, Spine: spine}
}

// FromTopology cuts n nodes out of a real topology: whole leaves, taken
// round-robin over the spines (a leaf's parent switch) so the cluster
// spans as many spines as the topology has, the last leaf cut short when
// n requires. Node names are the topology's, prefixed when prefix is not
// empty; each node gets gpus GPUs.
func FromTopology(t *topology.Topology, name string, n, gpus int, prefix string) (*Cluster, error) {
	if n < 1 || gpus < 1 || gpus > 64 {
		return nil, errors.Newf("nodes %d, GPUs per node %d: out of range", n, gpus)
	}
	bySpine := map[string][]string{}
	var spines []string
	for _, leaf := range t.Leaves() {
		nodes := t.Nodes(leaf)
		if len(nodes) == 0 {
			continue
		}
		spine := leaf
		if p := t.Path(nodes[0]); len(p) > 1 {
			spine = p[1]
		}
		if _, ok := bySpine[spine]; !ok {
			spines = append(spines, spine)
		}
		bySpine[spine] = append(bySpine[spine], leaf)
	}
	sort.Strings(spines)
	c := &Cluster{Name: fmt.Sprintf("%s: %d nodes × %d GPUs", name, n, gpus)}
	for round := 0; len(c.Nodes) < n; round++ {
		took := false
		for _, sp := range spines {
			if round >= len(bySpine[sp]) || len(c.Nodes) >= n {
				continue
			}
			took = true
			leaf := bySpine[sp][round]
			for _, nd := range t.Nodes(leaf) {
				if len(c.Nodes) == n {
					break
				}
				c.Nodes = append(c.Nodes, node(prefix+nd, gpus, leaf, sp))
			}
		}
		if !took {
			return nil, errors.Newf("the topology has %d nodes, fewer than the %d asked for", len(c.Nodes), n)
		}
	}
	c.index()
	c.Name += fmt.Sprintf(", %d leaves under %d spines", len(c.Leaves), len(c.Spines))
	return c, nil
}

// LoadLingjun cuts n nodes out of the Lingjun topology file at path.
func LoadLingjun(path string, n, gpus int, prefix string) (*Cluster, error) {
	t, err := topology.LoadFile(path)
	if err != nil {
		return nil, err
	}
	return FromTopology(t, "Lingjun 2023 Clos", n, gpus, prefix)
}
