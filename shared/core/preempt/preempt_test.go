package preempt

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// cluster: n nodes of 8 GPUs in 2 leaves; busy maps node -> job holding all
// its GPUs.
func cluster(n int, busy map[string]string) (*place.Snapshot, map[string]domain.Placement) {
	snap := &place.Snapshot{PortBase: 29500, PortCount: 100}
	held := map[string]domain.Placement{}
	for i := range n {
		name := string(rune('a' + i))
		leaf := "leaf-1"
		if i >= n/2 {
			leaf = "leaf-2"
		}
		nv := place.NodeView{Node: &domain.Node{Name: name, Addr: name, GPUs: 8, Leaf: leaf, Spine: "s"}, Up: true}
		if job, ok := busy[name]; ok {
			p := held[job]
			p.Nodes = append(p.Nodes, domain.NodePlacement{Node: name, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
			p.MasterAddr, p.MasterPort = p.Nodes[0].Node, 29500
			held[job] = p
		} else {
			nv.Free = []int{0, 1, 2, 3, 4, 5, 6, 7}
		}
		snap.Nodes = append(snap.Nodes, nv)
	}
	snap.Sort()
	return snap, held
}

func req(nodes int) place.Request {
	return place.Request{JobID: "hi", Nodes: nodes, GPUsPerNode: 8, TasksPerNode: 8}
}

func TestChoosesFewestThenLeastLostWork(t *testing.T) {
	snap, held := cluster(4, map[string]string{"a": "big", "b": "big", "c": "small1", "d": "small2"})
	cands := []Candidate{
		{ID: "big", Priority: 1, Placement: held["big"], LostWork: time.Hour},
		{ID: "small1", Priority: 1, Placement: held["small1"], LostWork: time.Minute},
		{ID: "small2", Priority: 1, Placement: held["small2"], LostWork: time.Minute},
	}
	// Needs 2 nodes: one gang (big) beats two cheaper ones.
	c, ok := Choose(snap, req(2), 5, cands, time.Time{}, 0)
	if !ok || len(c.Victims) != 1 || c.Victims[0] != "big" {
		t.Fatalf("want [big], got %+v %v", c, ok)
	}
	// Needs 1 node: the cheaper single gang.
	cands[1].LostWork = 30 * time.Second
	c, ok = Choose(snap, req(1), 5, cands, time.Time{}, 0)
	if !ok || len(c.Victims) != 1 || c.Victims[0] != "small1" {
		t.Fatalf("want [small1], got %+v %v", c, ok)
	}
}

func TestNeverEvictsEqualOrHigherPriority(t *testing.T) {
	snap, held := cluster(2, map[string]string{"a": "x", "b": "y"})
	cands := []Candidate{
		{ID: "x", Priority: 5, Placement: held["x"]},
		{ID: "y", Priority: 7, Placement: held["y"]},
	}
	if c, ok := Choose(snap, req(1), 5, cands, time.Time{}, 0); ok {
		t.Fatalf("evicted %v for a priority-5 job", c.Victims)
	}
}

func TestNeverEvictsForAPreemptorThatStillWouldNotFit(t *testing.T) {
	snap, held := cluster(2, map[string]string{"a": "x"})
	cands := []Candidate{{ID: "x", Priority: 0, Placement: held["x"]}}
	if c, ok := Choose(snap, req(3), 5, cands, time.Time{}, 0); ok {
		t.Fatalf("evicted %v although 3 nodes never fit on 2", c.Victims)
	}
}

func TestHonoursTheRequiredLevel(t *testing.T) {
	// leaf-1: a(x) b(y); leaf-2: c(z) d(free). A 2-node gang that requires
	// one leaf cannot use d+a: it must free a whole leaf.
	snap, held := cluster(4, map[string]string{"a": "x", "b": "y", "c": "z"})
	cands := []Candidate{
		{ID: "x", Priority: 0, Placement: held["x"], LostWork: time.Second},
		{ID: "y", Priority: 0, Placement: held["y"], LostWork: time.Second},
		{ID: "z", Priority: 0, Placement: held["z"], LostWork: time.Hour},
	}
	r := req(2)
	r.Topology.Required = place.LevelLeaf
	c, ok := Choose(snap, r, 5, cands, time.Time{}, 0)
	if !ok {
		t.Fatal("no choice")
	}
	if len(c.Victims) != 1 || c.Victims[0] != "z" {
		t.Fatalf("want [z] (frees leaf-2 with d), got %v", c.Victims)
	}
	if len(c.Placement.Leaves) != 1 {
		t.Errorf("placement spans %v", c.Placement.Leaves)
	}
}

func TestGreedyFindsLargerSets(t *testing.T) {
	busy := map[string]string{"a": "j1", "b": "j2", "c": "j3", "d": "j4"}
	snap, held := cluster(4, busy)
	var cands []Candidate
	for _, j := range []string{"j1", "j2", "j3", "j4"} {
		cands = append(cands, Candidate{ID: j, Priority: 0, Placement: held[j], LostWork: time.Minute})
	}
	c, ok := Choose(snap, req(3), 1, cands, time.Time{}, 0)
	if !ok || len(c.Victims) != 3 {
		t.Fatalf("want 3 victims, got %+v %v", c, ok)
	}
}
