package gang

import (
	"context"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// The job-record transitions gang makes once a gang is reserved: running
// at the launch barrier, an end (success or failure), a requeue. Each
// writes the job record before announcing it, so the events never run
// ahead of the record.

func (s *service) announceRunning(ctx context.Context, a domain.Allocation) error {
	now := s.cfg.Now().UTC()
	known, jobRev := s.knownJob(a.JobID)
	job, jobRev, changed, err := s.Jobs.UpdateFrom(ctx, known, jobRev, func(j *domain.Job) (bool, error) {
		return j.Run(a.Attempt, now, a.Pull.Summary(a.ReservedAt)), nil
	})
	if err != nil {
		return err
	}
	s.rememberJob(job, jobRev)
	if changed {
		s.Tel.Metrics.JobRunning(ctx, job)
	}
	if job.Attempt == a.Attempt && job.State == domain.StatePending {
		// The ranks started before the replica that reserved them recorded
		// the reservation on the job: it is about to. Try again then, or
		// the job would stay "reserved" with its gang running.
		return errs.MarkConflict(errors.Newf("job %s: reservation not yet recorded; will record running after it", errors.Safe(a.JobID)))
	}
	if job.Attempt != a.Attempt || job.State != domain.StateRunning {
		return nil
	}
	ev := events.ForJob(events.Running, job, job.RunningAt)
	ev.Placement = &a.Placement
	return s.Bus.PublishEvent(ctx, ev)
}

// finish records a terminal state first, then releases the allocation
// (read at rev) and announces the end: a crash in between leaves an
// allocation of a finished job, which the reconciler releases. With unlessDraining, a job
// being drained is left alone and finish returns draining: ranks exiting
// are then the drain's business.
func (s *service) finish(ctx context.Context, a domain.Allocation, rev int64, state domain.State, t events.Type,
	reason string, code *int, unlessDraining bool) (draining bool, err error) {
	now := s.cfg.Now().UTC()
	var job domain.Job
	var changed bool
	for i := 0; ; i++ {
		var notRunning bool
		known, jobRev := s.knownJob(a.JobID)
		job, _, changed, err = s.Jobs.UpdateFrom(ctx, known, jobRev, func(j *domain.Job) (bool, error) {
			draining, notRunning = false, false
			if j.Attempt == a.Attempt && j.State.Active() {
				if unlessDraining && j.Drain != nil {
					draining = true
					return false, nil
				}
				if j.State == domain.StateReserved && a.State == domain.AllocRunning {
					notRunning = true
					return false, nil
				}
			}
			return j.Finish(a.Attempt, state, reason, code, now), nil
		})
		if err != nil || draining {
			return draining, err
		}
		if !notRunning {
			break
		}
		if i == 2 {
			return false, errs.MarkConflict(errors.Newf("job %s: running not recorded", errors.Safe(a.JobID)))
		}
		// The worker that passed the barrier has not recorded it on the
		// job yet; running must precede the end in the record and events.
		if err := s.announceRunning(ctx, a); err != nil {
			return false, err
		}
	}
	if changed {
		s.Tel.Metrics.JobFinished(ctx, job)
	}
	if job.Attempt != a.Attempt || job.State != state {
		return false, s.release(ctx, a, rev)
	}
	// The record says it ended; the release and the announcement both
	// follow it and not each other, so they travel together. Only now,
	// with the record final, may the footprint go with the allocation.
	ev := events.ForJob(t, job, job.EndedAt)
	ev.Reason, ev.ExitCode, ev.Timing = job.Reason, job.ExitCode, &job.Timing
	announced := s.Bus.PublishEventAsync(ctx, ev)
	release := s.release
	if job.State.Terminal() {
		release = s.releaseFinished
	}
	return false, errors.CombineErrors(release(ctx, a, rev), announced())
}

// requeue sends the job back to the queue (or fails it when its restart
// budget is spent). The attempt is released first, completely — through
// its record, or by sweeping its keys when the record is gone or corrupt —
// so the job is pending on a new attempt only once no assignment of the
// old one is left for an agent to run: attempts never overlap. It often
// runs with no message behind it (reconciler, node loss): its span joins
// the job's trace through the allocation.
func (s *service) requeue(ctx context.Context, a domain.Allocation, reason string) (err error) {
	ctx, span := telemetry.Continue(ctx, s.Tel.Tracer, a.TraceParent, telemetry.SpanRequeue,
		telemetry.AttrJobID.String(a.JobID), telemetry.AttrAttempt.Int(a.Attempt), telemetry.AttrReason.String(reason))
	defer func() { telemetry.End(span, err) }()
	ctx = telemetry.WithJob(ctx, a.JobID)
	s.forget(a.JobID)
	if err := s.releaseAttempt(ctx, a.JobID, a.Attempt); err != nil {
		return err
	}
	now := s.cfg.Now().UTC()
	var failed bool
	job, changed, err := s.Jobs.Update(ctx, a.JobID, func(j *domain.Job) (bool, error) {
		var ch bool
		ch, failed = j.Requeue(a.Attempt, reason, now)
		return ch, nil
	})
	if err != nil || !changed {
		return err
	}
	s.Log.InfoContext(ctx, "gang lost", "job", a.JobID, "attempt", a.Attempt, "reason", reason, "failed", failed)
	if failed {
		s.Tel.Metrics.JobFinished(ctx, job)
		ev := events.ForJob(events.Failed, job, now)
		ev.Attempt, ev.Reason, ev.Timing = a.Attempt, job.Reason, &job.Timing
		return s.Bus.PublishEvent(ctx, ev)
	}
	ev := events.ForJob(events.Requeued, job, now)
	ev.Attempt, ev.Reason, ev.Timing = a.Attempt, reason, &job.Timing
	return s.Bus.PublishEvent(ctx, ev)
}
