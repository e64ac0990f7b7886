package drain

import (
	"context"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// watchLoop finishes drains whose deadline passed or whose ranks exited,
// drops records of gangs that went away on their own, and starts drains
// for time limits and drained nodes. Every replica runs it; each action is
// idempotent.
func (s *service) watchLoop(ctx context.Context) {
	clock.Every(ctx, s.cfg.CheckInterval, func() {
		now := s.cfg.Now()
		for _, rec := range s.drains.Snapshot() {
			key := store.AllocKey(rec.JobID)
			a, found := s.allocs.Get(key)
			// The cache drops values that fail its checks (forgetGone
			// reads them again, with the same checks); JudgeDrain treats
			// one that contradicts itself as no better.
			var err error
			switch step, why := lifecycle.JudgeDrain(rec, a, found, store.CheckAllocation(key, a), now); step {
			case lifecycle.DrainEnds:
				err = s.completeDrain(ctx, rec, why)
			case lifecycle.DrainForget:
				err = s.forgetGone(ctx, rec)
			}
			if err != nil {
				s.Log.Warn("drain step failed; will retry", "job", rec.JobID, "err", err)
			}
		}
		if loaded(s.drains.Ready(), s.allocs.Ready()) {
			for _, o := range orphanedDrains(s.running.snapshot(), s.drains.Snapshot(), s.allocationOf, now) {
				if err := s.resumeDrain(ctx, o); err != nil {
					s.Log.Warn("drain without its record not resumed; will retry", "job", o.JobID, "err", err)
				}
			}
		}
		for _, req := range dueDrains(s.running.snapshot(), s.allocationOf, s.nodeState.Snapshot(), s.live.Snapshot(), now) {
			if err := s.startDrain(ctx, req, events.SystemActor("drain")); err != nil {
				s.Log.Warn("drain not started; will retry", "job", req.JobID, "err", err)
			}
		}
	})
}

// forgetGone drops the record of a drain whose gang ended by itself (node
// loss, failure) — unless the allocation is merely not in the cache yet.
// An allocation record that fails the cache's checks (so the cache skips
// it) ends the drain now, as if its grace ran out: nothing can tell
// whether its ranks exited, and waiting on it would retry for ever. The
// read applies the cache's own checks: a laxer one would find the record
// there and leave the drain to the next pass, which would do the same.
// completeDrain releases what the record's keys hold and names it.
func (s *service) forgetGone(ctx context.Context, rec domain.DrainRecord) error {
	a, _, found, err := store.GetCheckedAllocation(ctx, s.Etcd, rec.JobID)
	if store.IsMalformed(err) {
		return s.completeDrain(ctx, rec, lifecycle.MalformedAllocationWhy(err))
	}
	if err != nil || (found && a.Attempt == rec.Attempt) {
		return err
	}
	return s.forgetDrain(ctx, rec.JobID, rec.Attempt)
}

// loaded says whether every cache has loaded (each channel closed): a
// drain record missing from a cache still loading is not missing.
func loaded(ready ...<-chan struct{}) bool {
	for _, c := range ready {
		select {
		case <-c:
		default:
			return false
		}
	}
	return true
}

// resumeDrain writes the drain record of a drain that a job record holds
// without one (orphanedDrains), from the job record as it is now: only if
// the same attempt is still running the same drain, so a mirror behind
// etcd cannot bring back a drain that ended.
func (s *service) resumeDrain(ctx context.Context, o orphan) (err error) {
	job, _, err := s.Jobs.Get(ctx, o.JobID)
	if errs.IsNotFound(err) {
		return nil
	}
	if err != nil || job.State != domain.StateRunning || job.Attempt != o.Attempt || job.Drain == nil || !job.Drain.RequestedAt.Equal(o.RequestedAt) {
		return err
	}
	ctx, span := s.drainSpan(ctx, job, job.Drain.Kind, job.Drain.Then)
	defer func() { telemetry.End(span, err) }()
	s.Log.WarnContext(ctx, "drain without its record: writing it from the job record", "job", job.ID, "attempt", job.Attempt,
		"requested", job.Drain.RequestedAt)
	_, err = s.recordDrain(ctx, job)
	return err
}

// allocationOf reads a job's allocation from the cache (decoding it if no
// one read it before).
func (s *service) allocationOf(jobID string) (domain.Allocation, bool) {
	return s.allocs.Get(store.AllocKey(jobID))
}
