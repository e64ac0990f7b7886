package drain

import (
	"context"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// completeDrain ends a drain: every ack is in, the ranks exited, or the
// grace period ran out. lifecycle.CompleteDrain decides the job record's
// transition and the events; here they are applied: record first, then
// release (agents stop the ranks), then drop the drain record, then
// announce; each step is safe to repeat.
func (s *service) completeDrain(ctx context.Context, rec domain.DrainRecord, why string) (err error) {
	ctx, span := telemetry.Continue(ctx, s.Tel.Tracer, rec.TraceParent, telemetry.SpanDrainDone,
		telemetry.AttrJobID.String(rec.JobID), telemetry.AttrAttempt.Int(rec.Attempt),
		telemetry.AttrDrainKind.String(string(rec.Drain.Kind)), telemetry.AttrReason.String(why))
	defer func() { telemetry.End(span, err) }()
	ctx = telemetry.WithJob(ctx, rec.JobID)
	c := lifecycle.CompleteDrain(rec, why, s.cfg.Now().UTC())
	var before domain.Job
	job, changed, err := s.Jobs.Update(ctx, rec.JobID, func(j *domain.Job) (bool, error) {
		var ended bool
		before, ended = c.End(j)
		return ended, nil
	})
	if err != nil && !errs.IsNotFound(err) {
		return err
	}
	if err := s.releaseJob(ctx, rec.JobID, rec.Attempt); err != nil {
		return err
	}
	if err := s.forgetDrain(ctx, rec.JobID, rec.Attempt); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	s.Tel.Metrics.Drained(ctx, rec.Drain.Kind, job.Timing.LastDrain)
	if job.State.Terminal() {
		s.Tel.Metrics.JobFinished(ctx, job)
	}
	s.Log.InfoContext(ctx, "drained", "job", rec.JobID, "attempt", rec.Attempt, "why", why, "then", rec.Drain.Then,
		"drain", job.Timing.LastDrain, "checkpointed", c.Checkpoint != nil)
	for _, ev := range c.Events(before, job) {
		if err := s.Bus.PublishEvent(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// forgetDrain deletes a job's drain record, if it is of attempt or an
// earlier one: a later attempt's is another drain (store.DeleteDrain).
func (s *service) forgetDrain(ctx context.Context, jobID string, attempt int) error {
	err := store.DeleteDrain(ctx, s.Etcd, jobID, attempt)
	return errors.Wrapf(err, "forget the drain record of %s", errors.Safe(jobID))
}
