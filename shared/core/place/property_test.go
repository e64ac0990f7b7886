package place_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// genCluster draws a small labelled cluster: up to 4 leaves under up to 3
// spines (a leaf keeps one spine, so labels never contradict), a node in
// ten without a leaf, some blocks, 4- or 8-GPU nodes with 0-2 sockets,
// random used GPUs and cores, some nodes down or drained.
func genCluster(r *rand.Rand) *place.Snapshot {
	leaves := 1 + r.IntN(4)
	spineOf := make([]string, leaves)
	for l := range spineOf {
		if r.IntN(5) > 0 {
			spineOf[l] = fmt.Sprintf("s%d", r.IntN(3))
		}
	}
	b := pt.MakeCluster()
	for i := range 2 + r.IntN(9) {
		gpus := []int{4, 8}[r.IntN(2)]
		n := pt.MakeNode(fmt.Sprintf("n%02d", i)).GPUs(gpus).CPUs(gpus * 4).Sockets(r.IntN(3))
		if r.IntN(10) > 0 {
			l := r.IntN(leaves)
			n.Leaf(fmt.Sprintf("l%d", l)).Spine(spineOf[l])
		}
		if r.IntN(3) == 0 {
			n.Block(fmt.Sprintf("b%d", r.IntN(2)))
		}
		for g := range gpus {
			if r.IntN(3) == 0 {
				n.UsedGPUs(g)
			}
		}
		if r.IntN(3) == 0 {
			var free []int
			for c := range gpus * 4 {
				if r.IntN(4) > 0 {
					free = append(free, c)
				}
			}
			n.FreeCPUs(free...)
		}
		switch r.IntN(10) {
		case 0:
			n.Down()
		case 1:
			n.Drained()
		}
		b.Add(n)
	}
	return b.Obj()
}

func genGang(r *rand.Rand) place.Request {
	g := []int{1, 2, 4, 8}[r.IntN(4)]
	tasks := []int{1, g}[r.IntN(2)]
	b := pt.MakeGang(1+r.IntN(4), g).Tasks(tasks)
	if r.IntN(3) == 0 {
		b.CPUs(1 + r.IntN(6))
	}
	if r.IntN(3) == 0 {
		b.Closest()
	}
	levels := []place.Level{place.LevelLeaf, place.LevelSpine, place.LevelBlock}
	if r.IntN(2) == 0 {
		b.Required(levels[r.IntN(3)])
	}
	// At most one soft constraint, its wait running or over.
	pending := []time.Time{now, now.Add(-2 * time.Hour)}[r.IntN(2)]
	switch r.IntN(4) {
	case 0:
		b.MaxSwitches(1+r.IntN(2), time.Hour).WaitSince(pending)
	case 1:
		b.Preferred(levels[r.IntN(3)], time.Hour).WaitSince(pending)
	}
	return b.Obj()
}

// naive recomputes, independently of the package, which nodes can host a
// member and the best (leaves, level) over every subset of them.
type naive struct {
	snap *place.Snapshot
	topo *topology.Topology
	req  place.Request
}

func (nv naive) fits(n place.NodeView, capacity bool) bool {
	r := nv.req
	free, cpus := n.Free, n.FreeCPUs
	if capacity {
		free = make([]int, n.Node.GPUs)
		for i := range free {
			free[i] = i
		}
		cpus = nil
	} else if !n.Up || n.Drained {
		return false
	}
	if len(free) < r.GPUsPerNode {
		return false
	}
	doms := n.Node.NUMA
	if len(doms) == 0 {
		d := domain.NUMANode{}
		for i := range n.Node.GPUs {
			d.GPUs = append(d.GPUs, i)
		}
		for i := range n.Node.CPUs {
			d.CPUs = append(d.CPUs, i)
		}
		doms = []domain.NUMANode{d}
	}
	per := r.GPUsPerNode / r.TasksPerNode
	ranks, cores := 0, 0
	for _, d := range doms {
		g, c := 0, 0
		for _, x := range d.GPUs {
			if slices.Contains(free, x) {
				g++
			}
		}
		for _, x := range d.CPUs {
			if cpus == nil || slices.Contains(cpus, x) {
				c++
			}
		}
		k := g / per
		if r.CPUsPerTask > 0 {
			k = min(k, c/r.CPUsPerTask)
		}
		ranks += k
		cores += c
	}
	if r.GPUBind == place.BindClosest {
		return ranks >= r.TasksPerNode
	}
	return r.CPUsPerTask == 0 || cores >= r.TasksPerNode*r.CPUsPerTask
}

// domainOf is the node's domain at a level ("" for none).
func (nv naive) domainOf(node string, l place.Level) string {
	switch l {
	case place.LevelBlock:
		b, _ := nv.topo.Block(node)
		return b
	case place.LevelLeaf, place.LevelSpine:
		path := nv.topo.Path(node)
		if path == nil {
			return "node:" + node
		}
		if l == place.LevelSpine && len(path) > 1 {
			return path[1]
		}
		return path[0]
	}
	return "all"
}

func (nv naive) leaves(set []string) int {
	seen := map[string]bool{}
	for _, n := range set {
		seen[nv.domainOf(n, place.LevelLeaf)] = true
	}
	return len(seen)
}

func (nv naive) level(set []string) int {
	l := nv.topo.LowestCommonLevel(set)
	if l == nv.topo.Height() {
		l = max(l, 1)
	}
	return l
}

// best returns the minimal (leaves, level) over subsets within one domain
// of each given level, and whether any exists.
func (nv naive) best(capacity bool, within ...place.Level) (leaves, level int, ok bool) {
	var elig []string
	for _, n := range nv.snap.Nodes {
		if nv.fits(n, capacity) {
			elig = append(elig, n.Node.Name)
		}
	}
	leaves, level = 1<<30, 1<<30
	var rec func(start int, set []string)
	rec = func(start int, set []string) {
		if len(set) == nv.req.Nodes {
			for _, l := range within {
				dom := nv.domainOf(set[0], l)
				for _, n := range set {
					if d := nv.domainOf(n, l); d == "" || d != dom {
						return
					}
				}
			}
			lv, lvl := nv.leaves(set), nv.level(set)
			if lv < leaves || (lv == leaves && lvl < level) {
				leaves, level = lv, lvl
			}
			ok = true
			return
		}
		for i := start; i < len(elig); i++ {
			rec(i+1, append(set, elig[i]))
		}
	}
	rec(0, nil)
	return leaves, level, ok
}

func TestPlacementProperties(t *testing.T) {
	placed := 0
	for seed := range uint64(propertyCases) {
		r := rand.New(rand.NewPCG(seed, 0x91ace))
		snap := genCluster(r)
		req := genGang(r)
		before := pt.DeepCopy(snap)
		res := place.Place(snap, req, now, seed)
		fail := func(format string, args ...any) {
			t.Helper()
			b, _ := json.Marshal(place.Input{Snapshot: before, Request: req, Now: now, Seed: seed})
			t.Fatalf("seed %d: %s\nresult: %s %s | %s\ninput: %s", seed, fmt.Sprintf(format, args...), res.Code, res.Reason, res.Detail, b)
		}
		if !equalState(snap, before) {
			fail("Place changed the snapshot")
		}
		topo, err := snap.ResolvedTopology()
		if err != nil {
			fail("topology: %v", err)
		}
		nv := naive{snap: snap, topo: topo, req: req}
		if req.TasksPerNode == 0 {
			nv.req.TasksPerNode = req.GPUsPerNode
		}
		want := nv.expect()
		if res.Code == place.Error || res.Code == place.Unschedulable && res.ReasonCode == place.ReasonInvalidRequest {
			fail("generated gangs are valid")
		}
		if want.code != res.Code || (want.code == place.Placed && want.relaxed != res.Relaxed) {
			fail("want %s (relaxed %v, %d leaves): %s", want.code, want.relaxed, want.leaves, want.why)
		}
		if res.Code != place.Placed {
			continue
		}
		placed++
		wantLeaves, wantLevel := want.leaves, want.level
		checkPlacement(t, seed, snap, nv, *res.Placement)
		names := res.Placement.NodeNames()
		if got := nv.leaves(names); got != wantLeaves || res.Leaves != wantLeaves {
			fail("uses %d leaves (reported %d), the optimum is %d", got, res.Leaves, wantLeaves)
		}
		if got := nv.level(names); got != wantLevel || res.Level != wantLevel {
			fail("crosses level %d (reported %d), the optimum is %d", got, res.Level, wantLevel)
		}
		// Determinism: again, and on a JSON round trip.
		if again := place.Place(snap.Clone(), req, now, seed); !reflect.DeepEqual(again, res) {
			fail("second run differs: %+v", again)
		}
		in := place.Input{Snapshot: snap, Request: req, Now: now, Seed: seed}
		data, err := in.Marshal()
		if err != nil {
			fail("%v", err)
		}
		back, err := place.UnmarshalInput(data)
		if err != nil {
			fail("%v", err)
		}
		if replayed := back.Replay(); !reflect.DeepEqual(replayed, res) {
			fail("replay differs: %+v", replayed)
		}
		// Take then Release restores the state.
		snap.Take(*res.Placement)
		checkNoDoubleUse(t, seed, before, snap, *res.Placement)
		snap.Release(*res.Placement)
		if !equalState(snap, before) {
			fail("Take+Release did not restore the snapshot")
		}
	}
	if placed < 300 {
		t.Fatalf("only %d of the generated cases placed; the generator is too tight", placed)
	}
}

type expected struct {
	code          place.Code
	relaxed       bool
	leaves, level int
	why           string
}

// expect derives the decision from the naive optima, following the rules
// in doc.go: soft constraints hold while their wait runs and they can be
// met at all; otherwise they are dropped.
func (nv naive) expect() expected {
	tc := nv.req.Topology
	req := tc.Required
	placed := func(leaves, level int, relaxed bool, why string) expected {
		return expected{place.Placed, relaxed, leaves, level, why}
	}
	leaves, level, ok := nv.best(false, req)
	_, _, ever := nv.best(true, req)
	base := func(relaxed bool, why string) expected {
		switch {
		case ok:
			return placed(leaves, level, relaxed, why+"; placeable")
		case ever:
			return expected{code: place.Wait, why: why + "; fits only the idle cluster"}
		}
		return expected{code: place.Unschedulable, why: why + "; never fits"}
	}
	waiting := now.Before(nv.req.WaitEnd(max(tc.WaitForSwitches, tc.PreferredWait), now))
	switch {
	case tc.Preferred != place.LevelNone:
		bl, blv, bok := nv.best(false, req, tc.Preferred)
		_, _, bever := nv.best(true, req, tc.Preferred)
		switch {
		case bok:
			return placed(bl, blv, false, "preferred met")
		case bever && waiting:
			if ever {
				return expected{code: place.Wait, why: "preferred possible later"}
			}
			return expected{code: place.Unschedulable, why: "required never fits"}
		}
		return base(ok, "preferred dropped")
	case tc.MaxSwitches > 0:
		capLeaves, _, _ := nv.best(true, req)
		switch {
		case ok && leaves <= tc.MaxSwitches:
			return placed(leaves, level, false, "within maxSwitches")
		case ever && capLeaves <= tc.MaxSwitches && waiting:
			return expected{code: place.Wait, why: "maxSwitches possible later"}
		}
		return base(ok, "maxSwitches dropped")
	}
	return base(false, "no soft constraint")
}

// checkPlacement: every GPU and core is free, on an up undrained node, no
// node twice, shape as asked, closest binding on one NUMA node.
func checkPlacement(t *testing.T, seed uint64, snap *place.Snapshot, nv naive, p domain.Placement) {
	t.Helper()
	req := nv.req
	byName := map[string]place.NodeView{}
	for _, n := range snap.Nodes {
		byName[n.Node.Name] = n
	}
	if len(p.Nodes) != req.Nodes {
		t.Fatalf("seed %d: %d nodes, want %d", seed, len(p.Nodes), req.Nodes)
	}
	seen := map[string]bool{}
	rank := 0
	for k, np := range p.Nodes {
		n := byName[np.Node]
		if seen[np.Node] || !n.Up || n.Drained || np.NodeRank != k {
			t.Fatalf("seed %d: node %s repeated, down, drained or misnumbered", seed, np.Node)
		}
		seen[np.Node] = true
		if len(np.GPUs) != req.GPUsPerNode || len(np.Ranks) != req.TasksPerNode {
			t.Fatalf("seed %d: node %s has %d GPUs in %d ranks", seed, np.Node, len(np.GPUs), len(np.Ranks))
		}
		usedCPU := map[int]bool{}
		for _, g := range np.GPUs {
			if !slices.Contains(n.Free, g) {
				t.Fatalf("seed %d: GPU %d of %s is not free", seed, g, np.Node)
			}
		}
		for _, rk := range np.Ranks {
			if rk.Rank != rank {
				t.Fatalf("seed %d: rank %d where %d expected", seed, rk.Rank, rank)
			}
			rank++
			if len(rk.GPUs) != req.GPUsPerNode/req.TasksPerNode || len(rk.CPUs) != req.CPUsPerTask {
				t.Fatalf("seed %d: rank %d has %d GPUs and %d cores", seed, rk.Rank, len(rk.GPUs), len(rk.CPUs))
			}
			for _, c := range rk.CPUs {
				if usedCPU[c] || (n.FreeCPUs != nil && !slices.Contains(n.FreeCPUs, c)) {
					t.Fatalf("seed %d: core %d of %s reused or not free", seed, c, np.Node)
				}
				usedCPU[c] = true
			}
			if req.GPUBind == place.BindClosest {
				checkClosest(t, seed, *n.Node, rk)
			}
		}
		if d := nv.domainOf(np.Node, req.Topology.Required); d == "" || d != nv.domainOf(p.Nodes[0].Node, req.Topology.Required) {
			t.Fatalf("seed %d: required %s broken by %s", seed, req.Topology.Required, np.Node)
		}
	}
}

// checkClosest: a rank's GPUs and cores share one NUMA node.
func checkClosest(t *testing.T, seed uint64, n domain.Node, rk domain.Rank) {
	t.Helper()
	if len(n.NUMA) == 0 {
		return // one domain: anything is closest
	}
	for _, d := range n.NUMA {
		if slices.Contains(d.GPUs, rk.GPUs[0]) {
			for _, g := range rk.GPUs {
				if !slices.Contains(d.GPUs, g) {
					t.Fatalf("seed %d: rank %d GPUs %v span NUMA nodes", seed, rk.Rank, rk.GPUs)
				}
			}
			for _, c := range rk.CPUs {
				if !slices.Contains(d.CPUs, c) {
					t.Fatalf("seed %d: rank %d cores %v not on NUMA %d with its GPUs", seed, rk.Rank, rk.CPUs, d.ID)
				}
			}
			return
		}
	}
	t.Fatalf("seed %d: rank %d GPU %d in no NUMA node", seed, rk.Rank, rk.GPUs[0])
}

// checkNoDoubleUse: after Take, exactly the placement's GPUs left Free.
func checkNoDoubleUse(t *testing.T, seed uint64, before, after *place.Snapshot, p domain.Placement) {
	t.Helper()
	taken := map[string][]int{}
	for _, np := range p.Nodes {
		taken[np.Node] = np.GPUs
	}
	for i, n := range after.Nodes {
		for _, g := range before.Nodes[i].Free {
			if slices.Contains(n.Free, g) == slices.Contains(taken[n.Node.Name], g) {
				t.Fatalf("seed %d: GPU %d of %s free=%v after Take", seed, g, n.Node.Name, slices.Contains(n.Free, g))
			}
		}
	}
}

// equalState compares what Take/Release/Place may change.
func equalState(a, b *place.Snapshot) bool {
	if len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for i := range a.Nodes {
		x, y := a.Nodes[i], b.Nodes[i]
		if !slices.Equal(x.Free, y.Free) || !slices.Equal(cpusOf(x), cpusOf(y)) {
			return false
		}
	}
	for addr, ports := range a.UsedPorts {
		for p, used := range ports {
			if used && !b.UsedPorts[addr][p] {
				return false
			}
		}
	}
	for addr, ports := range b.UsedPorts {
		for p, used := range ports {
			if used && !a.UsedPorts[addr][p] {
				return false
			}
		}
	}
	return true
}

// cpusOf is the free cores, nil meaning all of them.
func cpusOf(n place.NodeView) []int {
	if n.FreeCPUs != nil {
		return n.FreeCPUs
	}
	var all []int
	for _, d := range n.Node.NUMA {
		all = append(all, d.CPUs...)
	}
	if len(n.Node.NUMA) == 0 {
		for c := range n.Node.CPUs {
			all = append(all, c)
		}
	}
	slices.Sort(all)
	return all
}

// propertyCases is how many clusters the property test draws.
var propertyCases = 1500

func init() {
	if n, err := strconv.Atoi(os.Getenv("PLACEMENT_PROPERTY_CASES")); err == nil && n > 0 {
		propertyCases = n
	}
}
