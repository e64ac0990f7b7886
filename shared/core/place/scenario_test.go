package place_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

var now = time.Date(2025, 6, 1, 14, 0, 0, 0, time.UTC)

// leaf returns n nodes named <leaf>-<i> under leaf and spine, the first
// full of them fully used.
func leaf(name, spine string, n, full int) []*pt.NodeBuilder {
	var out []*pt.NodeBuilder
	for i := range n {
		b := pt.MakeNode(name + "-" + string(rune('a'+i))).Leaf(name).Spine(spine)
		if i < full {
			b.Used(8)
		}
		out = append(out, b)
	}
	return out
}

func nodes(groups ...[]*pt.NodeBuilder) []*pt.NodeBuilder {
	var out []*pt.NodeBuilder
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// workedExample is the cluster of doc.go: spine-1 has leaf-1 (4 free
// nodes of 6) and leaf-2 (2 free of 4); spine-2 has leaf-3 (3 free of 4).
func workedExample() []*pt.NodeBuilder {
	return nodes(leaf("leaf-1", "spine-1", 6, 2), leaf("leaf-2", "spine-1", 4, 2), leaf("leaf-3", "spine-2", 4, 1))
}

// wideSpine: leaf-1 (3 free), leaf-2 (2 free), leaf-x (1 free) under
// spine-1; leaf-3 (3 free) under spine-2.
func wideSpine() []*pt.NodeBuilder {
	return nodes(leaf("leaf-1", "spine-1", 4, 1), leaf("leaf-2", "spine-1", 4, 2),
		leaf("leaf-x", "spine-1", 4, 3), leaf("leaf-3", "spine-2", 4, 1))
}

// expect is what a scenario asserts; zero fields are not checked.
type expect struct {
	code      place.Code
	reason    string // prefix of Result.Reason
	detail    string // substring of Result.Detail
	nodes     []string
	perLeaf   map[string]int // nodes per leaf
	relaxed   bool
	level     *int
	master    string
	numLeaves int
}

func lvl(n int) *int { return &n }

type scenario struct {
	name  string
	nodes []*pt.NodeBuilder
	topo  string // topology YAML; "" for labels only
	ports [2]int // base, count; zero for the default
	used  map[string]int
	gang  *pt.GangBuilder
	want  expect
}

var scenarios = []scenario{
	{
		name: "one leaf, best fit keeps the larger leaf whole", nodes: workedExample(),
		gang: pt.MakeGang(3, 8),
		want: expect{code: place.Placed, perLeaf: map[string]int{"leaf-3": 3}, level: lvl(0), numLeaves: 1},
	},
	{
		name: "two leaves under one spine beat two leaves across the core", nodes: workedExample(),
		gang: pt.MakeGang(5, 8),
		want: expect{code: place.Placed, perLeaf: map[string]int{"leaf-1": 3, "leaf-2": 2}, level: lvl(1), numLeaves: 2,
			detail: "5 nodes on 2 leaves (leaf-1, leaf-2), crossing level 1"},
	},
	{
		name: "fewest leaves wins over lowest level", nodes: wideSpine(),
		gang: pt.MakeGang(6, 8),
		want: expect{code: place.Placed, perLeaf: map[string]int{"leaf-1": 3, "leaf-3": 3}, level: lvl(2), numLeaves: 2},
	},
	{
		name: "required spine takes more leaves to stay under one spine", nodes: wideSpine(),
		gang: pt.MakeGang(6, 8).Required(place.LevelSpine),
		want: expect{code: place.Placed, perLeaf: map[string]int{"leaf-1": 3, "leaf-2": 2, "leaf-x": 1}, level: lvl(1)},
	},
	{
		name: "required spine waits when no spine has room now", nodes: wideSpine(),
		gang: pt.MakeGang(7, 8).Required(place.LevelSpine),
		want: expect{code: place.Wait, reason: "RequiredTopology: best spine has 6 of 7 nodes with 8 free GPUs (spine-1)",
			detail: "needs 7 nodes with 8 free GPUs in one spine: best spine has 6 (spine-1); 9 such nodes on 4 leaves overall"},
	},
	{
		name: "fewer free GPUs first within a leaf",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("n1").Leaf("l1"), pt.MakeNode("n2").Leaf("l1").Used(4), pt.MakeNode("n3").Leaf("l1").Used(2),
		},
		gang: pt.MakeGang(1, 4),
		want: expect{code: place.Placed, nodes: []string{"n2"}, level: lvl(-1)},
	},
	{
		name:  "partly used leaf before a whole free leaf",
		nodes: nodes(leaf("leaf-1", "s", 4, 0), leaf("leaf-2", "s", 4, 2)),
		gang:  pt.MakeGang(2, 8),
		want:  expect{code: place.Placed, nodes: []string{"leaf-2-c", "leaf-2-d"}},
	},
	{
		name: "down and drained nodes are skipped",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("n1").Leaf("l1").Down(), pt.MakeNode("n2").Leaf("l1").Drained(),
			pt.MakeNode("n3").Leaf("l1"), pt.MakeNode("n4").Leaf("l1"),
		},
		gang: pt.MakeGang(2, 8),
		want: expect{code: place.Placed, nodes: []string{"n3", "n4"}},
	},
	{
		name: "resources: reasons aggregated per filter",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("n1").Leaf("l1").Down(), pt.MakeNode("n2").Leaf("l1").Drained(),
			pt.MakeNode("n3").Leaf("l1").Used(4), pt.MakeNode("n4").Leaf("l1").Used(1), pt.MakeNode("n5").Leaf("l1"),
		},
		gang: pt.MakeGang(2, 8),
		want: expect{code: place.Wait, reason: "Resources: 1 of 2 nodes with 8 free GPUs",
			detail: "needs 2 nodes with 8 free GPUs; 1 has them now, on 1 leaf; of 5 nodes: 1 down, 1 drained, 2 with fewer than 8 free GPUs"},
	},
	{
		name:  "required leaf waits when leaves are fragmented",
		nodes: nodes(leaf("leaf-1", "s", 2, 1), leaf("leaf-2", "s", 2, 1)),
		gang:  pt.MakeGang(2, 8).Required(place.LevelLeaf),
		want: expect{code: place.Wait, reason: "RequiredTopology",
			detail: "needs 2 nodes with 8 free GPUs in one leaf: best leaf has 1 (leaf-1); 2 such nodes on 2 leaves overall"},
	},
	{
		name:  "required leaf larger than any leaf is unschedulable",
		nodes: nodes(leaf("leaf-1", "s", 2, 0), leaf("leaf-2", "s", 2, 0)),
		gang:  pt.MakeGang(3, 8).Required(place.LevelLeaf),
		want: expect{code: place.Unschedulable, reason: "NoNodes: best leaf has 2 of 3 nodes with 8 GPUs",
			detail: "even with the cluster idle"},
	},
	{
		name:  "too few nodes in the cluster is unschedulable",
		nodes: nodes(leaf("leaf-1", "s", 2, 1)),
		gang:  pt.MakeGang(3, 8),
		want:  expect{code: place.Unschedulable, reason: "NoNodes: 2 of 3 nodes with 8 GPUs"},
	},
	{
		name: "maxSwitches waits while its wait runs", nodes: workedExample(),
		gang: pt.MakeGang(5, 8).MaxSwitches(1, 15*time.Minute).WaitSince(now.Add(-3 * time.Minute)),
		want: expect{code: place.Wait, reason: "WaitingForSwitches (12m left)",
			detail: "needs 5 nodes with 8 free GPUs within 1 leaf: the best placement spans 2 leaves"},
	},
	{
		name: "maxSwitches 2 is met at once", nodes: workedExample(),
		gang: pt.MakeGang(5, 8).MaxSwitches(2, 15*time.Minute).WaitSince(now),
		want: expect{code: place.Placed, numLeaves: 2},
	},
	{
		name: "maxSwitches relaxes after its wait", nodes: workedExample(),
		gang: pt.MakeGang(5, 8).MaxSwitches(1, 15*time.Minute).WaitSince(now.Add(-20 * time.Minute)),
		want: expect{code: place.Placed, relaxed: true, reason: "Relaxed: maxSwitches 1 dropped",
			perLeaf: map[string]int{"leaf-1": 3, "leaf-2": 2}, detail: "was not met within its wait"},
	},
	{
		name:  "maxSwitches that no leaf can ever meet relaxes at once",
		nodes: nodes(leaf("leaf-1", "s", 3, 0), leaf("leaf-2", "s", 3, 0)),
		gang:  pt.MakeGang(4, 8).MaxSwitches(1, time.Hour).WaitSince(now),
		want:  expect{code: place.Placed, relaxed: true, detail: "can never be met here", numLeaves: 2},
	},
	{
		name:  "waiting for switches but short of resources says Resources",
		nodes: nodes(leaf("leaf-1", "s", 2, 1), leaf("leaf-2", "s", 2, 2)),
		gang:  pt.MakeGang(2, 8).MaxSwitches(1, time.Hour).WaitSince(now),
		want:  expect{code: place.Wait, reason: "Resources"},
	},
	{
		name: "an expired preference is dropped while a switch wait holds", nodes: workedExample(),
		gang: pt.MakeGang(5, 8).Preferred(place.LevelLeaf, 0).MaxSwitches(2, time.Hour).WaitSince(now),
		want: expect{code: place.Placed, relaxed: true, reason: "Relaxed: preferred leaf dropped", numLeaves: 2},
	},
	{
		name: "with two waits running, the reason names the one that blocks", nodes: workedExample(),
		gang: pt.MakeGang(5, 8).Preferred(place.LevelSpine, time.Hour).MaxSwitches(1, time.Hour).WaitSince(now),
		want: expect{code: place.Wait, reason: "WaitingForSwitches (1h left)"},
	},
	{
		name:  "preferred leaf waits",
		nodes: nodes(leaf("leaf-1", "s", 4, 2), leaf("leaf-2", "s", 4, 2)),
		gang:  pt.MakeGang(3, 8).Preferred(place.LevelLeaf, 10*time.Minute).WaitSince(now.Add(-5 * time.Minute)),
		want:  expect{code: place.Wait, reason: "WaitingForTopology (5m left)", detail: "best leaf has 2 (leaf-1)"},
	},
	{
		name:  "preferred leaf relaxes after its wait",
		nodes: nodes(leaf("leaf-1", "s", 4, 2), leaf("leaf-2", "s", 4, 2)),
		gang:  pt.MakeGang(3, 8).Preferred(place.LevelLeaf, 10*time.Minute).WaitSince(now.Add(-11 * time.Minute)),
		want:  expect{code: place.Placed, relaxed: true, reason: "Relaxed: preferred leaf dropped", numLeaves: 2},
	},
	{
		name: "preferred spine honoured when possible",
		nodes: nodes(leaf("leaf-1", "spine-1", 2, 0), leaf("leaf-2", "spine-2", 2, 0),
			leaf("leaf-3", "spine-2", 1, 0)),
		gang: pt.MakeGang(3, 8).Preferred(place.LevelSpine, 0),
		want: expect{code: place.Placed, perLeaf: map[string]int{"leaf-2": 2, "leaf-3": 1}, level: lvl(1)},
	},
	{
		name: "required block keeps the gang in one NVLink domain",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("a1").Leaf("l1").Block("nvl-1"), pt.MakeNode("a2").Leaf("l1").Block("nvl-1"),
			pt.MakeNode("a3").Leaf("l1").Block("nvl-2"), pt.MakeNode("b1").Leaf("l2").Block("nvl-2"),
			pt.MakeNode("b2").Leaf("l2").Block("nvl-2"),
		},
		gang: pt.MakeGang(3, 8).Required(place.LevelBlock),
		want: expect{code: place.Placed, nodes: []string{"a3", "b1", "b2"}},
	},
	{
		name: "required block waits with the best block's count",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("a1").Leaf("l1").Block("nvl-1"), pt.MakeNode("a2").Leaf("l1").Block("nvl-1").Used(8),
			pt.MakeNode("b1").Leaf("l1").Block("nvl-2"), pt.MakeNode("b2").Leaf("l1").Block("nvl-2").Used(8),
		},
		gang: pt.MakeGang(2, 8).Required(place.LevelBlock),
		want: expect{code: place.Wait, reason: "RequiredTopology", detail: "in one block: best block has 1"},
	},
	{
		name: "the topology file wins over a node's label",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("n1").Leaf("wrong"), pt.MakeNode("n2"), pt.MakeNode("n3").Leaf("other"), pt.MakeNode("n4").Leaf("other").Used(8),
		},
		topo: "switches:\n  - name: core\n    children: [tor-1]\n  - name: tor-1\n    nodes: [n1, n2]\n",
		gang: pt.MakeGang(2, 8),
		want: expect{code: place.Placed, nodes: []string{"n1", "n2"}, perLeaf: map[string]int{"tor-1": 2}},
	},
	{
		name: "nodes outside the topology count as a leaf each",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("u1"), pt.MakeNode("u2"), pt.MakeNode("z1").Leaf("l1"), pt.MakeNode("z2").Leaf("l1"),
		},
		gang: pt.MakeGang(2, 8),
		want: expect{code: place.Placed, nodes: []string{"z1", "z2"}},
	},
	{
		name:  "a cluster without any topology still places, on as many leaves as nodes",
		nodes: []*pt.NodeBuilder{pt.MakeNode("u1"), pt.MakeNode("u2"), pt.MakeNode("u3").Used(2)},
		gang:  pt.MakeGang(2, 6),
		want:  expect{code: place.Placed, numLeaves: 2, level: lvl(1)},
	},
	{
		name: "closest binding skips a node with its free GPUs split over sockets",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("split").Leaf("l").Sockets(2).UsedGPUs(0, 1, 4, 5),
			pt.MakeNode("whole").Leaf("l").Sockets(2).UsedGPUs(4, 5, 6, 7),
		},
		gang: pt.MakeGang(1, 4).Closest(),
		want: expect{code: place.Placed, nodes: []string{"whole"}},
	},
	{
		name:  "closest binding that no node can satisfy is unschedulable",
		nodes: []*pt.NodeBuilder{pt.MakeNode("n").Sockets(2)},
		gang:  pt.MakeGang(1, 8).Closest(),
		want:  expect{code: place.Unschedulable, detail: "without room for 1 rank of 8 GPUs each on one NUMA node"},
	},
	{
		name:  "cores asked of a node that reports none",
		nodes: []*pt.NodeBuilder{pt.MakeNode("n").CPUs(0)},
		gang:  pt.MakeGang(1, 8).CPUs(2),
		want:  expect{code: place.Unschedulable, detail: "with fewer than 2 cores"},
	},
	{
		name:  "master moves to a node whose address has a free port",
		nodes: []*pt.NodeBuilder{pt.MakeNode("n1").Leaf("l"), pt.MakeNode("n2").Leaf("l")},
		ports: [2]int{29500, 1},
		used:  map[string]int{"n1": 29500},
		gang:  pt.MakeGang(2, 8),
		want:  expect{code: place.Placed, master: "n2"},
	},
	{
		name:  "no free MASTER_PORT waits",
		nodes: []*pt.NodeBuilder{pt.MakeNode("n1").Leaf("l")},
		ports: [2]int{29500, 1},
		used:  map[string]int{"n1": 29500},
		gang:  pt.MakeGang(1, 8),
		want:  expect{code: place.Wait, reason: "Resources: no free MASTER_PORT"},
	},
	{
		name:  "malformed gang",
		nodes: []*pt.NodeBuilder{pt.MakeNode("n1")},
		gang:  pt.MakeGang(1, 8).Tasks(3),
		want:  expect{code: place.Unschedulable, reason: "InvalidRequest"},
	},
	{
		name: "contradictory labels are an error, not a decision",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("n1").Leaf("l1").Spine("s1"), pt.MakeNode("n2").Leaf("l1").Spine("s2"),
		},
		gang: pt.MakeGang(1, 8),
		want: expect{code: place.Error, reason: "TopologyError"},
	},
	{
		name: "uneven tree from a file: a leaf hung straight off the core",
		nodes: []*pt.NodeBuilder{
			pt.MakeNode("a1"), pt.MakeNode("a2").Used(8), pt.MakeNode("b1"), pt.MakeNode("c1"),
		},
		topo: "switches:\n  - {name: core, children: [agg, tor-c]}\n  - {name: agg, children: [tor-a, tor-b]}\n" +
			"  - {name: tor-a, nodes: [a1, a2]}\n  - {name: tor-b, nodes: [b1]}\n  - {name: tor-c, nodes: [c1]}\n",
		gang: pt.MakeGang(2, 8),
		want: expect{code: place.Placed, nodes: []string{"a1", "b1"}, level: lvl(1)},
	},
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			b := pt.MakeCluster().Add(sc.nodes...)
			if sc.ports != [2]int{} {
				b.Ports(sc.ports[0], sc.ports[1])
			}
			for addr, port := range sc.used {
				b.UsePort(addr, port)
			}
			if sc.topo != "" {
				topo, err := topology.LoadYAML(strings.NewReader(sc.topo))
				if err != nil {
					t.Fatal(err)
				}
				b.Topology(topo)
			}
			snap := b.Obj()
			res := place.Place(snap, sc.gang.Obj(), now, 1)
			t.Logf("%s: %s | %s", res.Code, res.Reason, res.Detail)
			checkExpect(t, snap, res, sc.want)
			// Any seed gives an equally good answer.
			other := place.Place(snap, sc.gang.Obj(), now, 99)
			if other.Code != res.Code || other.Leaves != res.Leaves || other.Level != res.Level {
				t.Errorf("seed 99 gave %s on %d leaves at level %d, seed 1 %s on %d at %d",
					other.Code, other.Leaves, other.Level, res.Code, res.Leaves, res.Level)
			}
		})
	}
}

func checkExpect(t *testing.T, snap *place.Snapshot, res place.Result, want expect) {
	t.Helper()
	if res.Code != want.code {
		t.Fatalf("code = %s (%s; %s), want %s", res.Code, res.Reason, res.Detail, want.code)
	}
	if !strings.HasPrefix(res.Reason, want.reason) {
		t.Errorf("reason = %q, want prefix %q", res.Reason, want.reason)
	}
	if !strings.Contains(res.Detail, want.detail) {
		t.Errorf("detail = %q, want it to contain %q", res.Detail, want.detail)
	}
	if res.Relaxed != want.relaxed {
		t.Errorf("relaxed = %v, want %v", res.Relaxed, want.relaxed)
	}
	if want.level != nil && res.Level != *want.level {
		t.Errorf("level = %d, want %d", res.Level, *want.level)
	}
	if want.numLeaves != 0 && res.Leaves != want.numLeaves {
		t.Errorf("leaves = %d, want %d", res.Leaves, want.numLeaves)
	}
	if res.Code != place.Placed {
		return
	}
	got := res.Placement.NodeNames()
	if want.nodes != nil {
		g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want.nodes))
		if !slices.Equal(g, w) {
			t.Errorf("nodes = %v, want %v", g, w)
		}
	}
	if want.perLeaf != nil {
		topo, err := snap.ResolvedTopology()
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, n := range got {
			l, _ := topo.Leaf(n)
			per[l]++
		}
		if !maps.Equal(per, want.perLeaf) {
			t.Errorf("nodes per leaf = %v, want %v", per, want.perLeaf)
		}
	}
	if want.master != "" && res.Placement.Nodes[0].Node != want.master {
		t.Errorf("master = %s, want %s", res.Placement.Nodes[0].Node, want.master)
	}
}
