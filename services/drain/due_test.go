package drain

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
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
	reqs := dueDrains([]domain.Job{job}, map[string]domain.Allocation{store.AllocKey("j"): alloc},
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
			allocs[store.AllocKey(j.ID)] = domain.Allocation{JobID: j.ID, Attempt: j.Attempt}
		}
	}
	allocs[store.AllocKey("next-attempt")] = domain.Allocation{JobID: "next-attempt", Attempt: 2}
	got := orphanedDrains(jobs, drains, allocs, now)
	want := []orphan{{JobID: "orphan-a", Attempt: 1, RequestedAt: now.Add(-time.Hour)}, {JobID: "orphan-b", Attempt: 2, RequestedAt: now.Add(-orphanAfter)}}
	if !slices.Equal(got, want) {
		t.Errorf("orphaned drains %+v, want %+v", got, want)
	}
}
