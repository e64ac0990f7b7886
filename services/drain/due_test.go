package drain

import (
	"encoding/json"
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
