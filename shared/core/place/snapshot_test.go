package place_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

func TestInputRoundTripsWithTopology(t *testing.T) {
	topo, err := topology.LoadYAML(strings.NewReader(
		"switches:\n  - {name: core, children: [t1, t2]}\n  - {name: t1, nodes: [a, b]}\n  - {name: t2, nodes: [c]}\nblocks:\n  - {name: nvl, nodes: [a, b]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	snap := pt.MakeCluster().Topology(topo).
		Add(server("a").Used(2), server("b").FreeCPUs(), server("c").Drained()).
		UsePort("a", 29500).Obj()
	in := place.Input{
		Snapshot: snap, Now: now, Seed: 7,
		Request: pt.MakeGang(2, 4).Tasks(2).CPUs(2).Closest().Required(place.LevelBlock).
			MaxSwitches(1, 600e9).WaitSince(now).Obj(),
	}
	data, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := place.UnmarshalInput(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Snapshot.Nodes[1].FreeCPUs == nil {
		t.Fatal("an empty FreeCPUs list came back as nil (all free)")
	}
	if back.Snapshot.Nodes[0].FreeCPUs != nil {
		t.Fatal("a nil FreeCPUs list came back non-nil")
	}
	if !reflect.DeepEqual(back.Snapshot.Topology.Spec(), topo.Spec()) {
		t.Fatalf("topology changed: %+v", back.Snapshot.Topology.Spec())
	}
	if !reflect.DeepEqual(back.Request, in.Request) || !back.Now.Equal(in.Now) || back.Seed != in.Seed {
		t.Fatalf("request changed: %+v", back.Request)
	}
	// b has no free cores, so only a can host a rank: the gang waits, and
	// the replay says so identically.
	want := in.Replay()
	if got := back.Replay(); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay: %+v, original %+v", got, want)
	}
	if want.Code != place.Wait {
		t.Fatalf("got %s, want Wait: %s", want.Code, want.Detail)
	}
	if _, err := place.UnmarshalInput([]byte(`{"request":{}}`)); err == nil {
		t.Fatal("an input without a snapshot decoded")
	}
	for _, in := range []string{`{"snapshot":{"nodes":[{"free":[0]}]}}`, `{"snapshot":{"nodes":[{"node":null,"free":[0]}]}}`} {
		if _, err := place.UnmarshalInput([]byte(in)); err == nil || !strings.Contains(err.Error(), "snapshot.nodes.0.node") {
			t.Errorf("a node view without its node: %v (want an error naming it)", err)
		}
	}
	if _, err := queue.UnmarshalInput([]byte(`{"snapshot":{"nodes":[{"free":[0]}]}}`)); err == nil {
		t.Error("a queue input with a node view without its node decoded")
	}
}

func TestTakeAndRelease(t *testing.T) {
	snap := pt.MakeCluster().Add(server("a"), server("b")).Obj()
	res := place.Place(snap, pt.MakeGang(2, 4).Tasks(2).CPUs(8).Closest().Obj(), now, 0)
	if res.Code != place.Placed {
		t.Fatal(res.Detail)
	}
	p := *res.Placement
	snap.Take(p)
	if !snap.UsedPorts[p.MasterAddr][p.MasterPort] {
		t.Fatal("Take did not claim the master port")
	}
	for _, nv := range snap.Nodes {
		if len(nv.Free) != 4 || len(nv.FreeCPUs) != 64-16 {
			t.Fatalf("%s after Take: %d GPUs, %d cores free", nv.Node.Name, len(nv.Free), len(nv.FreeCPUs))
		}
	}
	again := place.Place(snap, pt.MakeGang(2, 4).Obj(), now, 0)
	if again.Code != place.Placed || again.Placement.MasterPort == p.MasterPort && again.Placement.MasterAddr == p.MasterAddr {
		t.Fatalf("second gang: %s on port %d", again.Code, again.Placement.MasterPort)
	}
	snap.Release(p)
	if snap.UsedPorts[p.MasterAddr][p.MasterPort] {
		t.Fatal("Release kept the master port")
	}
	for _, nv := range snap.Nodes {
		if len(nv.Free) != 8 || len(nv.FreeCPUs) != 64 {
			t.Fatalf("%s after Release: %d GPUs, %d cores free", nv.Node.Name, len(nv.Free), len(nv.FreeCPUs))
		}
	}
	// Unknown nodes are ignored rather than crashing a what-if.
	snap.Release(domain.Placement{Nodes: []domain.NodePlacement{{Node: "ghost", GPUs: []int{0}}}})
	snap.Take(domain.Placement{Nodes: []domain.NodePlacement{{Node: "ghost", GPUs: []int{0}}}})
}

func TestEmptyClusterAnswersAdmission(t *testing.T) {
	inv := map[string]domain.Node{}
	for _, n := range []*pt.NodeBuilder{server("a"), server("b"), pt.MakeNode("c").Leaf("m")} {
		inv[n.Obj().Node.Name] = *n.Obj().Node
	}
	snap := place.EmptyCluster(inv)
	if got := place.Place(snap, pt.MakeGang(3, 8).Required(place.LevelLeaf).Obj(), now, 0); got.Code != place.Unschedulable {
		t.Fatalf("3 nodes in one leaf of 2: %s", got.Code)
	}
	if got := place.Place(snap, pt.MakeGang(2, 8).Required(place.LevelLeaf).Obj(), now, 0); got.Code != place.Placed {
		t.Fatalf("2 nodes in leaf l: %s %s", got.Code, got.Detail)
	}
	if up, total := snap.Capacity(); up != 24 || total != 24 {
		t.Fatalf("capacity %d/%d", up, total)
	}
}

func TestPlacePodsIsNotAllOrNothing(t *testing.T) {
	// Two leaves; the per-pod baseline spreads a 2-node gang over the two
	// emptiest nodes wherever they are, and a gang too big for the free
	// GPUs keeps the pods it placed.
	snap := pt.MakeCluster().Add(
		pt.MakeNode("a1").Leaf("l1").Used(2), pt.MakeNode("a2").Leaf("l1").Used(2),
		pt.MakeNode("b1").Leaf("l2"), pt.MakeNode("c1").Leaf("l3"),
	).Obj()
	res := place.PlacePods(snap, pt.MakeGang(2, 8).Obj())
	if !res.Complete() || res.Leaves != 2 {
		t.Fatalf("placed %d/%d on %d leaves; want 2/2 on 2 (b1, c1)", res.Placed, res.Wanted, res.Leaves)
	}
	gang := place.Place(pt.MakeCluster().Add(
		pt.MakeNode("a1").Leaf("l1").Used(2), pt.MakeNode("a2").Leaf("l1").Used(2),
		pt.MakeNode("b1").Leaf("l2"), pt.MakeNode("c1").Leaf("l3"),
	).Obj(), pt.MakeGang(2, 6).Obj(), now, 0)
	if gang.Leaves != 1 {
		t.Fatalf("gang placement of 2×6 used %d leaves, want 1 (a1, a2)", gang.Leaves)
	}
	big := place.PlacePods(snap, pt.MakeGang(4, 8).Tasks(8).Obj())
	if big.Complete() || big.Placed != 12 {
		t.Fatalf("placed %d of %d pods; want 12 (the 6+6 free GPUs), held", big.Placed, big.Wanted)
	}
	if free := snap.FreeGPUs(); free != 0 {
		t.Fatalf("%d GPUs still free: partial pods should hold theirs", free)
	}
}

// A clone shares its free lists and port sets with the original (Clone),
// so Take and Release on either must leave the other as it was: they
// replace a list or a set, never write into one.
func TestCloneSharesNothingTakeOrReleaseChanges(t *testing.T) {
	snap := pt.MakeCluster().
		Add(server("a").Addr("10.0.0.1").Used(2).FreeCPUs(0, 1, 2, 3), server("b").Addr("10.0.0.2")).
		UsePort("10.0.0.1", 29500).Obj()
	gang := domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29501, Nodes: []domain.NodePlacement{
		{Node: "a", GPUs: []int{2, 3}, Ranks: []domain.Rank{{GPUs: []int{2, 3}, CPUs: []int{0, 1}}}},
		{Node: "b", GPUs: []int{0}, Ranks: []domain.Rank{{GPUs: []int{0}}}},
	}}
	running := domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29500, Nodes: []domain.NodePlacement{
		{Node: "a", GPUs: []int{0, 1}, Ranks: []domain.Rank{{GPUs: []int{0, 1}, CPUs: []int{4, 5}}}},
	}}
	for name, change := range map[string]func(*place.Snapshot){
		"take":    func(s *place.Snapshot) { s.Take(gang) },
		"release": func(s *place.Snapshot) { s.Release(running) },
		"both":    func(s *place.Snapshot) { s.Release(running); s.Take(gang) },
	} {
		t.Run(name, func(t *testing.T) {
			orig := pt.DeepCopy(snap)
			want := pt.DeepCopy(orig)
			c := orig.Clone()
			change(c)
			if !reflect.DeepEqual(orig, want) {
				t.Fatalf("changing the clone changed the original:\n got  %+v\n want %+v", orig, want)
			}
			if reflect.DeepEqual(c.Nodes, want.Nodes) || reflect.DeepEqual(c.UsedPorts, want.UsedPorts) {
				t.Fatalf("the change left the clone as it was: the test checks nothing")
			}
			changed := pt.DeepCopy(c)
			change(orig)
			if !reflect.DeepEqual(c, changed) {
				t.Fatalf("changing the original changed the clone:\n got  %+v\n want %+v", c, changed)
			}
		})
	}
}
