package place_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// Feasibility remembers answers by request without the job ID, which is
// only sound while Place does not read it: two requests that differ only
// in their job ID get the same result, placement and explanation alike.
func TestPlaceDoesNotReadJobID(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 22))
	snap := placetest.Fabric1024.Snapshot()
	placetest.Scatter(snap, r, 0.6)
	at := time.Unix(1_000, 0)
	for i := range 400 {
		req := placetest.RandomGang(r, "job-a")
		// Also what the gangs of a real stream ask that no node here
		// has, so that unschedulable answers and their explanations
		// are compared too.
		switch r.IntN(8) {
		case 0:
			req.GPUType = "H100"
		case 1:
			req.MinGPUMemoryMiB = 1 << 20
		case 2:
			req.Container = true
		case 3:
			req.Topology.Required = place.LevelLeaf
		case 4:
			req.Topology.Preferred, req.Topology.PreferredWait = place.LevelLeaf, time.Minute
		case 5:
			req.TasksPerNode = 3 // does not divide the GPUs: an invalid request
		}
		other := req
		other.JobID = fmt.Sprintf("another-job-%d", i)
		a, b := place.Place(snap.Clone(), req, at, 1), place.Place(snap.Clone(), other, at, 1)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%+v: job ID %q gave %s %s, %q gave %s %s", req, req.JobID, a.Code, a.Detail, other.JobID, b.Code, b.Detail)
		}
	}
}

func spec(t *testing.T, js string) jobspec.Spec {
	t.Helper()
	s, err := jobspec.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Check answers as Feasible does, whatever was asked before, and from
// memory: once a shape was judged on a snapshot, the answer stays that
// snapshot's (a new snapshot takes a new Feasibility).
func TestFeasibilityAnswersAsFeasible(t *testing.T) {
	nodes := placetest.MakeCluster().Add(
		placetest.MakeNode("a1").GPUModel("NVIDIA A100-SXM4-80GB", 81920),
		placetest.MakeNode("a2").GPUModel("NVIDIA A100-SXM4-80GB", 81920),
	).Obj()
	specs := []jobspec.Spec{
		spec(t, `{"id":"one","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`),
		spec(t, `{"id":"two","gang":{"nodes":2,"gpusPerNode":8},"command":["true"]}`),
		spec(t, `{"id":"three","gang":{"nodes":3,"gpusPerNode":8},"command":["true"]}`),
		spec(t, `{"id":"h100","gang":{"nodes":1,"gpusPerNode":8,"gpuType":"H100"},"command":["true"]}`),
		spec(t, `{"id":"a100","gang":{"nodes":1,"gpusPerNode":8,"gpuType":"A100"},"command":["true"]}`),
		spec(t, `{"id":"leaf","gang":{"nodes":2,"gpusPerNode":8},"topology":{"maxSwitches":1,"waitForSwitches":"5m"},"command":["true"]}`),
	}
	want := map[string]bool{"one": true, "two": true, "three": false, "h100": false, "a100": true, "leaf": true}
	f := place.NewFeasibility(nodes)
	for _, round := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}} {
		for _, i := range round {
			s := specs[i]
			detail, ok := f.Check(s)
			wantDetail, wantOK := place.Feasible(nodes, s.ID, s)
			if ok != want[s.ID] || ok != wantOK || detail != wantDetail {
				t.Errorf("%s: Check = %v %q; Feasible = %v %q; want feasible %v", s.ID, ok, detail, wantOK, wantDetail, want[s.ID])
			}
			// Another job of the same shape: the same answer.
			same := s
			same.ID = s.ID + "-again"
			if d, o := f.Check(same); o != ok || d != detail {
				t.Errorf("%s: same shape under another ID answered %v %q, want %v %q", same.ID, o, d, ok, detail)
			}
		}
	}
	// The answers are remembered, for every job of the same request: on a
	// snapshot changed under it (which a caller must not do), Check still
	// answers for the one it was made with, for a job it was never asked
	// about, where Feasible sees the change.
	nodes.Nodes = nodes.Nodes[:1]
	two := specs[1]
	two.ID = "another-two-node-gang"
	if _, ok := place.Feasible(nodes, two.ID, two); ok {
		t.Fatal("a 2-node gang is feasible on one node")
	}
	if _, ok := f.Check(two); !ok {
		t.Error("Check worked the 2-node gang's answer out again instead of remembering it")
	}
}
