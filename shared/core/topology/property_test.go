package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomTree is a generated forest plus the facts the checks recompute
// naively from it, independently of the package's indexes.
type randomTree struct {
	spec     Spec
	parent   map[string]string   // switch -> parent; roots absent
	children map[string][]string // switch -> child switches
	leafOf   map[string]string   // node -> leaf
	nodes    []string
}

// genTree builds one or (sometimes) two trees, up to four levels deep and
// uneven, with 1-3 children per switch and 0-3 nodes per leaf, listing the
// switches in shuffled order so that nothing depends on file order.
func genTree(r *rand.Rand) randomTree {
	g := randomTree{parent: map[string]string{}, children: map[string][]string{}, leafOf: map[string]string{}}
	next := 0
	var grow func(depthLeft int) string
	grow = func(depthLeft int) string {
		name := fmt.Sprintf("s%d", next)
		next++
		sw := SwitchSpec{Name: name}
		if depthLeft == 0 || r.IntN(4) == 0 {
			for range r.IntN(4) {
				node := fmt.Sprintf("n%d", len(g.nodes))
				g.nodes = append(g.nodes, node)
				g.leafOf[node] = name
				sw.Nodes = append(sw.Nodes, node)
			}
		} else {
			for range 1 + r.IntN(3) {
				c := grow(depthLeft - 1)
				g.parent[c] = name
				sw.Children = append(sw.Children, c)
			}
		}
		g.children[name] = sw.Children
		g.spec.Switches = append(g.spec.Switches, sw)
		return name
	}
	for range 1 + r.IntN(5)/4 { // a second tree one time in five
		grow(1 + r.IntN(4))
	}
	r.Shuffle(len(g.spec.Switches), func(i, j int) {
		g.spec.Switches[i], g.spec.Switches[j] = g.spec.Switches[j], g.spec.Switches[i]
	})
	return g
}

func (g randomTree) height(sw string) int {
	h := 0
	for _, c := range g.children[sw] {
		h = max(h, g.height(c)+1)
	}
	return h
}

// lcaLevel returns the naive level of the lowest common ancestor of a's and
// b's leaves, or the number of levels when they are in different trees.
func (g randomTree) lcaLevel(a, b string) int {
	above := map[string]bool{}
	for s := g.leafOf[a]; s != ""; s = g.parent[s] {
		above[s] = true
	}
	for s := g.leafOf[b]; s != ""; s = g.parent[s] {
		if above[s] {
			return g.height(s)
		}
	}
	levels := 0
	for _, sw := range g.spec.Switches {
		levels = max(levels, g.height(sw.Name)+1)
	}
	return levels
}

func (g randomTree) under(sw string) []string {
	var out []string
	for n, leaf := range g.leafOf {
		for s := leaf; s != ""; s = g.parent[s] {
			if s == sw {
				out = append(out, n)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestRandomTreesMatchNaiveModel(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 0x70b0))
		g := genTree(r)
		topo, err := New(g.spec)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, sw := range g.spec.Switches {
			if got, want := topo.Level(sw.Name), g.height(sw.Name); got != want {
				t.Fatalf("seed %d: Level(%s) = %d, want %d", seed, sw.Name, got, want)
			}
			if got, want := topo.Nodes(sw.Name), g.under(sw.Name); !slices.Equal(got, want) {
				t.Fatalf("seed %d: Nodes(%s) = %q, want %q", seed, sw.Name, got, want)
			}
		}
		for _, n := range g.nodes {
			checkPath(t, seed, g, n, topo.Path(n))
		}
		if len(g.nodes) < 2 {
			continue
		}
		for range 20 {
			a, b := g.nodes[r.IntN(len(g.nodes))], g.nodes[r.IntN(len(g.nodes))]
			want := g.lcaLevel(a, b)
			if a == b {
				want = -1
			}
			if got := topo.LowestCommonLevel([]string{a, b}); got != want {
				t.Fatalf("seed %d: LowestCommonLevel(%s, %s) = %d, want %d", seed, a, b, got, want)
			}
		}
		// For a set, the common ancestor is the highest of the pairwise ones
		// with any fixed member: they all lie on that member's path.
		set := []string{g.nodes[r.IntN(len(g.nodes))]}
		want := -1
		for range 1 + r.IntN(4) {
			n := g.nodes[r.IntN(len(g.nodes))]
			set = append(set, n)
			if n != set[0] {
				want = max(want, g.lcaLevel(set[0], n))
			}
		}
		if got := topo.LowestCommonLevel(set); got != want {
			t.Fatalf("seed %d: LowestCommonLevel(%q) = %d, want %d", seed, set, got, want)
		}
	}
}

// checkPath: the path starts at the node's leaf, climbs one parent at a time
// and ends at a root.
func checkPath(t *testing.T, seed uint64, g randomTree, node string, path []string) {
	t.Helper()
	if len(path) == 0 || path[0] != g.leafOf[node] {
		t.Fatalf("seed %d: Path(%s) = %q, want it to start at leaf %s", seed, node, path, g.leafOf[node])
	}
	for i := 1; i < len(path); i++ {
		if g.parent[path[i-1]] != path[i] {
			t.Fatalf("seed %d: Path(%s) = %q: %s is not the parent of %s", seed, node, path, path[i], path[i-1])
		}
	}
	if top := path[len(path)-1]; g.parent[top] != "" {
		t.Fatalf("seed %d: Path(%s) = %q ends at %s, which has parent %s", seed, node, path, top, g.parent[top])
	}
}
