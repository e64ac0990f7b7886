package placement

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// The view is updated change by change and snapshotted between changes;
// every snapshot must equal a view built from scratch from the state at
// that moment (what placement rebuilt every cycle before), and changing a
// snapshot must not change the view.
func TestViewIncrementalMatchesRebuild(t *testing.T) {
	const nodes, gpus, cpus = 12, 8, 16
	live := map[string]domain.Node{}
	inv := map[string]domain.Node{}
	for i := range nodes {
		n := domain.Node{Name: fmt.Sprintf("n%02d", i), Addr: fmt.Sprintf("10.0.0.%d", i), GPUs: gpus, CPUs: cpus,
			Leaf: fmt.Sprintf("leaf%d", i/4), Spine: "spine0"}
		inv[store.InventoryKey(n.Name)] = n
		if i%5 != 4 {
			live[store.NodeKey(n.Name)] = n
		}
	}
	states := map[string]domain.NodeState{store.NodeStateKey("n03"): {Drained: true}}
	loads := 0
	load := func() (map[string]domain.Node, map[string]domain.Node, map[string]domain.NodeState) {
		loads++
		return live, inv, states
	}
	gens := [3]uint64{1, 1, 1}

	// The state as etcd would hold it: the allocations.
	allocs := map[string]domain.Allocation{}
	fresh := func() *view {
		v := newView()
		for _, a := range allocs {
			a := a
			v.allocChanged(&a, nil)
		}
		return v
	}

	rng := rand.New(rand.NewPCG(7, 7))
	v := newView()
	var earlier *place.Snapshot
	var earlierPorts map[string]map[int]bool
	for step := range 400 {
		node := fmt.Sprintf("n%02d", rng.IntN(nodes))
		id := fmt.Sprintf("job%d", rng.IntN(6))
		switch rng.IntN(3) {
		case 0, 1: // write or rewrite an allocation: GPUs, cores, a port (jobs may overlap: a forged record)
			a := domain.Allocation{JobID: id, Placement: domain.Placement{
				MasterAddr: fmt.Sprintf("10.0.0.%d", rng.IntN(2)), MasterPort: 29500 + rng.IntN(4),
				Nodes: []domain.NodePlacement{{
					Node: node, GPUs: []int{rng.IntN(gpus), rng.IntN(gpus)},
					Ranks: []domain.Rank{{CPUs: []int{rng.IntN(cpus), rng.IntN(cpus)}}},
				}}}}
			var prev *domain.Allocation
			if p, ok := allocs[id]; ok {
				prev = &p
			}
			allocs[id] = a
			v.allocChanged(&a, prev)
		case 2: // release an allocation
			if p, ok := allocs[id]; ok {
				delete(allocs, id)
				v.allocChanged(nil, &p)
			}
		}
		if step%97 == 0 {
			// A node changes: the view must rebuild.
			gens[0]++
			delete(live, store.NodeKey(node))
		}
		if rng.IntN(3) > 0 {
			continue
		}
		got := v.snapshot(Config{}, gens, load)
		// An earlier cycle's snapshot is its own: later changes to the
		// view leave it as it was.
		if earlier != nil && !reflect.DeepEqual(earlier.UsedPorts, earlierPorts) {
			t.Fatalf("step %d: an earlier snapshot's ports changed to %v, want %v", step, earlier.UsedPorts, earlierPorts)
		}
		want := fresh().snapshot(Config{}, gens, load)
		earlier, earlierPorts = v.snapshot(Config{}, gens, load), want.Clone().UsedPorts
		for addr, ports := range earlierPorts {
			earlierPorts[addr] = maps.Clone(ports)
		}
		if !reflect.DeepEqual(got.Nodes, want.Nodes) || !reflect.DeepEqual(got.UsedPorts, want.UsedPorts) {
			t.Fatalf("step %d: incremental view differs from a rebuild:\n got %+v\nwant %+v", step, got.Nodes, want.Nodes)
		}
		// The caller owns its snapshot: what a decision takes or returns
		// there (the ports too, whose sets clones share) stays there.
		for i := range got.Nodes {
			got.Nodes[i].Free = nil
		}
		got.Release(domain.Placement{MasterAddr: "10.0.0.0", MasterPort: 29500 + rng.IntN(4)})
		got.Take(domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29500 + rng.IntN(4)})
		if again := v.snapshot(Config{}, gens, load); !reflect.DeepEqual(again.Nodes, want.Nodes) ||
			!reflect.DeepEqual(again.UsedPorts, want.UsedPorts) {
			t.Fatalf("step %d: changing a snapshot changed the view", step)
		}
	}
}

// Between node-set changes the snapshot is updated in place, not rebuilt:
// the node caches are read once per node set.
func TestViewReadsNodesOnlyWhenTheyChange(t *testing.T) {
	n := domain.Node{Name: "n1", GPUs: 8, Leaf: "l1"}
	live := map[string]domain.Node{store.NodeKey("n1"): n}
	loads := 0
	load := func() (map[string]domain.Node, map[string]domain.Node, map[string]domain.NodeState) {
		loads++
		return live, nil, nil
	}
	v := newView()
	gens := [3]uint64{1, 0, 0}
	first := v.snapshot(Config{}, gens, load)
	v.allocChanged(&domain.Allocation{JobID: "j", Placement: domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1", GPUs: []int{3}}}}}, nil)
	second := v.snapshot(Config{}, gens, load)
	if loads != 1 {
		t.Fatalf("node caches read %d times for one node set, want 1", loads)
	}
	if len(first.Nodes[0].Free) != 8 || len(second.Nodes[0].Free) != 7 {
		t.Fatalf("free GPUs: first %v, second %v", first.Nodes[0].Free, second.Nodes[0].Free)
	}
	if first.Nodes[0].Free[3] != 3 {
		t.Fatalf("an earlier snapshot changed: %v", first.Nodes[0].Free)
	}
	gens[0]++
	_ = v.snapshot(Config{}, gens, load)
	if loads != 2 {
		t.Fatalf("node caches read %d times after a node change, want 2", loads)
	}
}

// A discovered node's cores may have gaps (its agent's cpuset): the free
// cores are the node's own NUMA lists minus those held, never 0..CPUs-1.
func TestViewFreeCoresFromNUMALists(t *testing.T) {
	n := domain.Node{Name: "n1", Addr: "10.0.0.1", GPUs: 2, CPUs: 12, NUMA: []domain.NUMANode{
		{ID: 0, GPUs: []int{0}, CPUs: []int{2, 3}}, {ID: 1, GPUs: []int{1}, CPUs: []int{8, 9, 10, 11}},
	}}
	v := newView()
	v.allocChanged(&domain.Allocation{JobID: "j", Placement: domain.Placement{Nodes: []domain.NodePlacement{
		{Node: "n1", Ranks: []domain.Rank{{GPUs: []int{1}, CPUs: []int{9, 10}}}},
	}}}, nil)
	nodes := map[string]domain.Node{store.NodeKey("n1"): n}
	snap := v.snapshot(Config{}, [3]uint64{1, 1, 1}, func() (map[string]domain.Node, map[string]domain.Node, map[string]domain.NodeState) {
		return nodes, nodes, nil
	})
	if got, want := snap.Nodes[0].FreeCPUs, []int{2, 3, 8, 11}; !reflect.DeepEqual(got, want) {
		t.Errorf("free cores %v, want %v", got, want)
	}
}
