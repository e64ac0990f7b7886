package placement

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/depend"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// Fair share charges a queue for the hours its jobs ran: an attempt that
// was requeued (preempted) is charged up to the requeue, not for the time
// the job then waits, and its hours stay charged when the next attempt
// runs; a deleted record leaves nothing running.
func TestUsageOfARequeuedAttempt(t *testing.T) {
	s := &scheduler{active: map[string]*seenJob{}, ended: map[string]depend.Job{}, kick: make(chan struct{}, 1),
		usage: map[string]queue.UsageRecord{}, finished: queue.NewUsageLedger(0), folded: map[string]bool{}}
	put := func(j domain.Job) {
		raw, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		s.jobChanged(jobs.Entry{Key: j.ID, Value: raw})
	}
	t0 := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	j := domain.Job{ID: "big", State: domain.StateRunning, Attempt: 1, Owner: "alice", SubmittedAt: t0, PendingSince: t0, RunningAt: t0,
		Spec: jobspec.Spec{Name: "big", Queue: "research", Gang: jobspec.Gang{Nodes: 8, GPUsPerNode: 8, TasksPerNode: 8}, Command: []string{"x"}}}
	put(j)
	// Preempted after an hour: pending again, waiting a day.
	j.State, j.Attempt, j.PendingSince, j.RunningAt = domain.StatePending, 2, t0.Add(time.Hour), time.Time{}
	put(j)
	charged := func() float64 { return s.finished.Usage(t0.Add(26*time.Hour), nil)["research"] }
	if len(s.usage) != 0 || math.Abs(charged()-64) > 1e-9 {
		t.Fatalf("after the requeue: running %v, charged %.2f GPU-hours, want none running and 64", s.usage, charged())
	}
	// The next attempt runs an hour and a half from a day later, then ends.
	j.State, j.RunningAt = domain.StateRunning, t0.Add(25*time.Hour)
	put(j)
	j.State, j.EndedAt = domain.StateSucceeded, t0.Add(26*time.Hour+30*time.Minute)
	put(j)
	if len(s.usage) != 0 || math.Abs(charged()-64-96) > 1e-9 {
		t.Errorf("after the second attempt: running %v, charged %.2f GPU-hours, want 160", s.usage, charged())
	}
	// A running job whose record is deleted is no longer charged.
	put(domain.Job{ID: "gone", State: domain.StateRunning, RunningAt: t0, Spec: j.Spec})
	s.jobChanged(jobs.Entry{Key: "gone", Deleted: true})
	if len(s.usage) != 0 {
		t.Errorf("a deleted record is still charged as running: %v", s.usage)
	}
	// Retention deletes a finished job's record: the job is forgotten,
	// its hours stay charged.
	s.jobChanged(jobs.Entry{Key: "big", Deleted: true})
	if len(s.folded) != 0 || len(s.ended) != 0 || math.Abs(charged()-160) > 1e-9 {
		t.Errorf("after the record's deletion: folded %v, ended %v, charged %.2f GPU-hours, want none, none, 160", s.folded, s.ended, charged())
	}
}
