package drain

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A node drained with the longest reason an operator may give still makes
// a drain request, and a drain record, that their decoders accept: the job's
// reason wraps the node's, and a cancel may later join its own.
func TestANodeDrainsLongestReasonFitsTheJobsDrain(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	spec := testenv.GangSpec("j", 1, 8, "true")
	p := testenv.GangPlacement([]string{"n1"}, 8, 29500)
	job := domain.Job{ID: "j", Spec: spec, State: domain.StateRunning, Attempt: 1, Placement: &p, RunningAt: now}
	alloc := domain.Allocation{JobID: "j", Attempt: 1, State: domain.AllocRunning, Placement: p}
	state := domain.NodeState{Drained: true, Reason: strings.Repeat("é", domain.MaxReasonBytes/2), Since: now}
	reqs := dueDrains([]domain.Job{job}, lookup(map[string]domain.Allocation{"j": alloc}),
		map[string]domain.NodeState{store.NodeStateKey("n1"): state}, nil, now)
	if len(reqs) != 1 {
		t.Fatalf("requests %+v, want the job's drain", reqs)
	}
	raw, err := json.Marshal(reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := domain.DecodeDrainRequest(raw); err != nil {
		t.Errorf("the drain request does not decode: %v", err)
	}
	rec := domain.DrainRecord{JobID: "j", Attempt: 1, Expected: []int{0},
		Drain: domain.Drain{Kind: reqs[0].Kind, Then: reqs[0].Then, RequestedAt: now, Deadline: now.Add(time.Minute),
			Reason: domain.ThenCancelReason(reqs[0].Reason, strings.Repeat("x", 2*domain.MaxReasonBytes))}}
	if raw, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := domain.DecodeDrainRecord(raw); err != nil {
		t.Errorf("the drain record, upgraded to a cancel, does not decode: %v", err)
	}
}

// Only a running job's drain with no drain record since orphanAfter, whose
// attempt still holds its allocation, is taken again; named by attempt and
// request time, so a drain that ends meanwhile is not brought back.
func TestOrphanedDrains(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	drain := func(asked time.Duration) *domain.Drain {
		return &domain.Drain{Kind: domain.DrainCheckpoint, Then: domain.ThenCancel, Reason: "why", Actor: "bob",
			RequestedAt: now.Add(-asked), Deadline: now.Add(time.Minute)}
	}
	jobs := []domain.Job{
		{ID: "recorded", State: domain.StateRunning, Attempt: 1, Drain: drain(time.Minute)},
		{ID: "orphan-b", State: domain.StateRunning, Attempt: 2, Drain: drain(orphanAfter)},
		{ID: "orphan-a", State: domain.StateRunning, Attempt: 1, Drain: drain(time.Hour)},
		{ID: "just-asked", State: domain.StateRunning, Attempt: 1, Drain: drain(orphanAfter - time.Millisecond)},
		{ID: "not-draining", State: domain.StateRunning, Attempt: 1},
		{ID: "reserved", State: domain.StateReserved, Attempt: 1, Drain: drain(time.Minute)},
		{ID: "released", State: domain.StateRunning, Attempt: 1, Drain: drain(time.Minute)},
		{ID: "next-attempt", State: domain.StateRunning, Attempt: 1, Drain: drain(time.Minute)},
	}
	drains := map[string]domain.DrainRecord{store.DrainKey("recorded"): {JobID: "recorded"}}
	allocs := map[string]domain.Allocation{}
	for _, j := range jobs {
		if j.ID != "released" {
			allocs[j.ID] = domain.Allocation{JobID: j.ID, Attempt: j.Attempt}
		}
	}
	allocs["next-attempt"] = domain.Allocation{JobID: "next-attempt", Attempt: 2}
	got := orphanedDrains(jobs, drains, lookup(allocs), now)
	want := []orphan{{JobID: "orphan-a", Attempt: 1, RequestedAt: now.Add(-time.Hour)}, {JobID: "orphan-b", Attempt: 2, RequestedAt: now.Add(-orphanAfter)}}
	if !slices.Equal(got, want) {
		t.Errorf("orphaned drains %+v, want %+v", got, want)
	}
}

// lookup reads allocations from m, by job ID.
func lookup(m map[string]domain.Allocation) allocationOf {
	return func(jobID string) (domain.Allocation, bool) {
		a, ok := m[jobID]
		return a, ok
	}
}

// Drain's allocation cache decodes only what is read, so the decision
// reads a running gang's allocation only while some node is drained or
// has a GPU withdrawn; time limits need none.
func TestDueDrainsReadAllocationsOnlyWhenANodeCallsForIt(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	p := testenv.GangPlacement([]string{"n1"}, 8, 29500)
	var running []domain.Job
	allocs := map[string]domain.Allocation{}
	for _, id := range []string{"a", "b", "c"} {
		running = append(running, domain.Job{ID: id, Spec: testenv.GangSpec(id, 1, 8, "true"), State: domain.StateRunning, Attempt: 1, Placement: &p, RunningAt: now})
		allocs[id] = domain.Allocation{JobID: id, Attempt: 1, State: domain.AllocRunning, Placement: p}
	}
	running[0].Spec.TimeLimit = jobspec.DurationOf(time.Second)
	reads := 0
	counted := func(jobID string) (domain.Allocation, bool) {
		reads++
		return lookup(allocs)(jobID)
	}
	healthy := map[string]domain.Node{store.NodeKey("n1"): {Name: "n1"}}
	reqs := dueDrains(running, counted, map[string]domain.NodeState{store.NodeStateKey("n1"): {Reason: "resumed"}}, healthy, now.Add(time.Minute))
	if reads != 0 || len(reqs) != 1 || reqs[0].JobID != "a" || reqs[0].Kind != domain.DrainTimeLimit {
		t.Errorf("no node drained: %d allocations read, requests %+v; want none read, a's time limit", reads, reqs)
	}
	reqs = dueDrains(running, counted, map[string]domain.NodeState{store.NodeStateKey("n1"): {Drained: true, Reason: "maintenance"}}, healthy, now)
	if reads != 3 || len(reqs) != 3 {
		t.Errorf("n1 drained: %d allocations read, requests %+v; want 3 and 3", reads, reqs)
	}
	reads = 0
	sick := map[string]domain.Node{store.NodeKey("n1"): {Name: "n1", Unhealthy: []domain.GPUFault{{GPU: 3, Reason: "XID 79"}}}}
	reqs = dueDrains(running, counted, nil, sick, now)
	if reads != 3 || len(reqs) != 3 || reqs[0].Kind != domain.DrainNode {
		t.Errorf("GPU 3 withdrawn: %d allocations read, requests %+v; want 3 and 3", reads, reqs)
	}
}
