package drain

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// runningJobs mirrors the active jobs from the jobs KV watch, and adds up
// the η terms of finished ones (for the cluster η gauge).
type runningJobs struct {
	mu   sync.Mutex
	jobs map[string]domain.Job
	// ended holds the IDs of finished jobs whose timing is in endedTiming.
	ended       map[string]bool
	endedTiming domain.Timing
}

func newRunningJobs() *runningJobs {
	return &runningJobs{jobs: map[string]domain.Job{}, ended: map[string]bool{}}
}

func (r *runningJobs) snapshot() []domain.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]domain.Job, 0, len(r.jobs))
	for _, j := range r.jobs {
		out = append(out, j)
	}
	return out
}

// apply mirrors one job record (jobs.Store.Follow hands it every record,
// replayed and live): an active job is kept, and a finished one's timing
// is added up once (a watch that starts again replays every record).
func (r *runningJobs) apply(e jobs.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := jobs.Decode(e.Value)
	if !e.Deleted && err == nil && j.State.Active() {
		r.jobs[j.ID] = j
	} else {
		delete(r.jobs, e.Key)
	}
	if err == nil && j.State.Terminal() && !r.ended[j.ID] {
		r.ended[j.ID] = true
		t := &r.endedTiming
		t.Compute, t.SchedLatency, t.Drain = t.Compute+j.Timing.Compute, t.SchedLatency+j.Timing.SchedLatency, t.Drain+j.Timing.Drain
	}
}

// watchLoop finishes drains whose deadline passed or whose ranks exited,
// drops records of gangs that went away on their own, and starts drains
// for time limits and drained nodes. Every replica runs it; each action is
// idempotent.
func (s *service) watchLoop(ctx context.Context) {
	clock.Every(ctx, s.cfg.CheckInterval, func() {
		now := s.cfg.Now()
		for _, rec := range s.drains.Snapshot() {
			a, found := s.allocs.Get(store.AllocKey(rec.JobID))
			var err error
			// The cache drops values that do not decode; one that decodes
			// but contradicts itself is as useless (no nodes: "all exited").
			bad := store.CheckAllocation(store.AllocKey(rec.JobID), a)
			switch {
			case found && bad != nil:
				err = s.completeDrain(ctx, rec, "allocation record malformed ("+bad.Error()+"); ranks stopped")
			case !found || a.Attempt != rec.Attempt:
				err = s.forgetGone(ctx, rec)
			case now.After(rec.Drain.Deadline):
				err = s.completeDrain(ctx, rec, fmt.Sprintf("grace period of %s expired; ranks killed", rec.Drain.Deadline.Sub(rec.Drain.RequestedAt).Round(time.Second)))
			case a.AllExited():
				err = s.completeDrain(ctx, rec, "ranks exited")
			}
			if err != nil {
				s.Log.Warn("drain step failed; will retry", "job", rec.JobID, "err", err)
			}
		}
		for _, req := range dueDrains(s.running.snapshot(), s.allocs.Snapshot(), s.nodeState.Snapshot(), now) {
			if err := s.startDrain(ctx, req, events.SystemActor("drain")); err != nil {
				s.Log.Warn("drain not started; will retry", "job", req.JobID, "err", err)
			}
		}
	})
}

// forgetGone drops the record of a drain whose gang ended by itself (node
// loss, failure) — unless the allocation is merely not in the cache yet.
// An allocation record that cannot be read (the cache skips those) ends
// the drain now, as if its grace ran out: nothing can tell whether its
// ranks exited, and waiting on it would retry for ever. completeDrain
// releases what the record's keys hold and names it.
func (s *service) forgetGone(ctx context.Context, rec domain.DrainRecord) error {
	a, _, found, err := store.GetAllocation(ctx, s.Etcd, rec.JobID)
	if store.IsMalformed(err) {
		return s.completeDrain(ctx, rec, "allocation record malformed ("+err.Error()+"); ranks stopped")
	}
	if err != nil || (found && a.Attempt == rec.Attempt) {
		return err
	}
	return s.forgetDrain(ctx, rec.JobID)
}
