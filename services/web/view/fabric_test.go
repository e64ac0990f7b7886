package view

import (
	"fmt"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func node(name, spine, leaf string, gpus int) domain.Node {
	return domain.Node{Name: name, Spine: spine, Leaf: leaf, GPUs: gpus}
}

// fabricCase is a small fabric: two leaves under one spine, a node down,
// a node drained, a GPU withdrawn and a job on two GPUs of n1.
func fabricCase() FabricInput {
	n1, n2, n3, n4 := node("n1", "s1", "l1", 4), node("n2", "s1", "l1", 4), node("n3", "s1", "l2", 4), node("n4", "s1", "l2", 4)
	n2.Unhealthy = []domain.GPUFault{{GPU: 3, Reason: "XID 79"}}
	job := domain.Job{ID: "j1", Spec: jobspec.Spec{Name: "train"}, Attempt: 1, Placement: &domain.Placement{Nodes: []domain.NodePlacement{
		{Node: "n1", GPUs: []int{0, 1}, Ranks: []domain.Rank{{Rank: 0, GPUs: []int{0}}, {Rank: 1, GPUs: []int{1}}}},
	}}}
	return FabricInput{
		Inventory: map[string]domain.Node{"n1": n1, "n2": n2, "n3": n3, "n4": n4},
		Live:      map[string]domain.Node{"n1": n1, "n2": n2, "n3": n3}, // n4 is down
		States:    map[string]domain.NodeState{"n3": {Drained: true, Reason: "maintenance"}},
		Claims:    map[string]map[int]domain.Claim{"n1": {0: {JobID: "j1", Attempt: 1}, 1: {JobID: "j1", Attempt: 1}}},
		Jobs:      map[string]domain.Job{"j1": job},
	}
}

func TestBuildFabric(t *testing.T) {
	f := BuildFabric(fabricCase())
	if f.Nodes != 4 || f.Leaves != 2 || f.GPUs != 16 || f.Used != 2 || f.Unhealthy != 1 || f.Down != 1 || f.Drained != 1 {
		t.Fatalf("totals: %+v", f)
	}
	// Free: n1 2 (2 held), n2 3 (1 withdrawn), n3 drained and n4 down none.
	if f.Free != 5 {
		t.Errorf("free = %d, want 5", f.Free)
	}
	if len(f.Spines) != 1 || f.Spines[0].Name != "s1" || len(f.Spines[0].Leaves) != 2 {
		t.Fatalf("tree: %+v", f.Spines)
	}
	l1, l2 := f.Spines[0].Leaves[0], f.Spines[0].Leaves[1]
	if l1.Name != "l1" || l1.Free != 5 || l1.Total != 8 || l2.Free != 0 || l2.Down != 1 || l2.Drained != 1 {
		t.Errorf("leaves: l1 %s %d/%d, l2 %d/%d down %d drained %d", l1.Name, l1.Free, l1.Total, l2.Free, l2.Total, l2.Down, l2.Drained)
	}
	if len(l1.Jobs) != 1 || l1.Jobs[0] != (JobChip{ID: "j1", Color: JobColor("j1"), GPUs: 2}) {
		t.Errorf("l1 jobs = %+v", l1.Jobs)
	}
	n1 := l1.Nodes[0]
	cases := []struct {
		gpu        GPU
		class, job string
		title      string
	}{
		{n1.GPUs[0], "held", "j1", "n1 GPU 0: job j1 (train), rank 0"},
		{n1.GPUs[1], "held", "j1", "n1 GPU 1: job j1 (train), rank 1"},
		{n1.GPUs[2], "free", "", "n1 GPU 2: free"},
		{l1.Nodes[1].GPUs[3], "unhealthy", "", "n2 GPU 3: unhealthy: XID 79"},
		{l2.Nodes[0].GPUs[0], "off", "", "n3 GPU 0: node drained"},
		{l2.Nodes[1].GPUs[0], "off", "", "n4 GPU 0: node down"},
	}
	for _, c := range cases {
		if c.gpu.Class != c.class || c.gpu.JobID != c.job || c.gpu.Title != c.title {
			t.Errorf("cell %+v, want class %s job %q title %q", c.gpu, c.class, c.job, c.title)
		}
	}
	if l2.Nodes[0].State != NodeDrained || l2.Nodes[0].Reason != "maintenance" || l2.Nodes[1].State != NodeDown {
		t.Errorf("node states: %+v %+v", l2.Nodes[0], l2.Nodes[1])
	}
}

func TestBuildFabricCollapsesLargeFabrics(t *testing.T) {
	for _, c := range []struct {
		nodes, limit int
		want         bool
	}{{4, 0, false}, {64, 0, false}, {65, 0, true}, {5, 4, true}, {4, 4, false}} {
		in := FabricInput{Inventory: map[string]domain.Node{}, CollapseAbove: c.limit}
		for i := range c.nodes {
			n := node(fmt.Sprintf("n%03d", i), "s", "l", 8)
			in.Inventory[n.Name] = n
		}
		if got := BuildFabric(in).Collapsed; got != c.want {
			t.Errorf("%d nodes, limit %d: collapsed %v, want %v", c.nodes, c.limit, got, c.want)
		}
	}
}

// A claim of an older attempt names no rank: the record's placement is
// the current attempt's.
func TestBuildFabricStaleClaimHasNoRank(t *testing.T) {
	in := fabricCase()
	in.Claims["n1"][0] = domain.Claim{JobID: "j1", Attempt: 0}
	f := BuildFabric(in)
	if got := f.Spines[0].Leaves[0].Nodes[0].GPUs[0].Title; got != "n1 GPU 0: job j1 (train)" {
		t.Errorf("title = %q", got)
	}
}

func TestBuildFabricUnlabelledNodes(t *testing.T) {
	f := BuildFabric(FabricInput{Live: map[string]domain.Node{"a": node("a", "", "", 1)}})
	if f.Spines[0].Name != unlabelled || f.Spines[0].Leaves[0].Name != unlabelled || f.Free != 1 {
		t.Errorf("%+v", f)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 42 * time.Second: "42s", 187 * time.Second: "3m07s", 5*time.Hour + 2*time.Minute: "5h02m", 72 * time.Hour: "3d"} {
		if got := Age(d); got != want {
			t.Errorf("Age(%s) = %q, want %q", d, got, want)
		}
	}
}
