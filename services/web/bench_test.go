package web

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// fabricAt is a fabric of n nodes of 8 GPUs, 8 nodes a leaf, 16 leaves a
// spine, with half its GPUs held by 8-GPU jobs (one per node), one node in
// 50 down and one in 100 drained.
func fabricAt(n int) view.FabricInput {
	in := view.FabricInput{Inventory: map[string]domain.Node{}, Live: map[string]domain.Node{},
		States: map[string]domain.NodeState{}, Claims: map[string]map[int]domain.Claim{}, Jobs: map[string]domain.Job{}}
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		node := domain.Node{Name: name, GPUs: 8, Leaf: fmt.Sprintf("leaf-%03d", i/8), Spine: fmt.Sprintf("spine-%02d", i/128)}
		in.Inventory[name] = node
		if i%50 != 49 {
			in.Live[name] = node
		}
		if i%100 == 7 {
			in.States[name] = domain.NodeState{Drained: true, Reason: "maintenance"}
		}
		if i%2 == 0 {
			id := fmt.Sprintf("job-%04d", i)
			p := domain.NodePlacement{Node: name, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}
			in.Claims[name] = map[int]domain.Claim{}
			for g := range 8 {
				in.Claims[name][g] = domain.Claim{JobID: id, Attempt: 1}
				p.Ranks = append(p.Ranks, domain.Rank{Rank: g, LocalRank: g, GPUs: []int{g}})
			}
			in.Jobs[id] = domain.Job{ID: id, Attempt: 1, Placement: &domain.Placement{Nodes: []domain.NodePlacement{p}}}
		}
	}
	return in
}

// BenchmarkFabricPage1000Nodes is the fabric page's server time at 1,000
// nodes: the view model from the followed state, then the whole page
// rendered (html-bytes is its size).
func BenchmarkFabricPage1000Nodes(b *testing.B) {
	in := fabricAt(1000)
	p := mustPages()
	var size int
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		f := view.BuildFabric(in)
		if err := p.sets["fabric"].ExecuteTemplate(&buf, "layout", pageData{Title: "Fabric", Nav: "fabric", Live: "/live/fabric", Body: f}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "html-bytes")
}

// BenchmarkFabricModel1000Nodes is the view model alone.
func BenchmarkFabricModel1000Nodes(b *testing.B) {
	in := fabricAt(1000)
	b.ReportAllocs()
	for b.Loop() {
		view.BuildFabric(in)
	}
}

// The benchmark's fabric is what the page claims to show.
func TestFabricAt1000Nodes(t *testing.T) {
	f := view.BuildFabric(fabricAt(1000))
	if f.Nodes != 1000 || f.Leaves != 125 || len(f.Spines) != 8 || !f.Collapsed || f.Down != 20 || f.Used != 4000 {
		t.Fatalf("%d nodes, %d leaves, %d spines, collapsed %v, %d down, %d used", f.Nodes, f.Leaves, len(f.Spines), f.Collapsed, f.Down, f.Used)
	}
	var buf bytes.Buffer
	if err := mustPages().sets["fabric"].ExecuteTemplate(&buf, "layout", pageData{Body: f}); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte(`class="node `)); n != 1000 {
		t.Errorf("page shows %d nodes", n)
	}
	if bytes.Contains(buf.Bytes(), []byte(" open>")) {
		t.Error("a leaf starts open on a 1,000-node fabric")
	}
}
