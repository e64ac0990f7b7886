package drain

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// unknownJobRetries bounds how long a request for a job not (yet) admitted
// is retried: a cancel published right after its submit may overtake it.
const unknownJobRetries = 20

// handleCancel cancels one job at once (no checkpoint). Cancelling a
// finished job changes nothing. The request usually comes from outside the
// job's trace (a CLI); the cancellation itself joins the job's trace,
// linked to the request.
func (s *service) handleCancel(ctx context.Context, msg jetstream.Msg, req domain.CancelRequest) (err error) {
	actor, ok, err := s.authorize(ctx, msg, subjects.Cancel, req.JobID, "cancel", "")
	if !ok {
		return err
	}
	reason := req.Reason
	if reason == "" {
		reason = "cancelled by user"
	}
	now := s.cfg.Now().UTC()
	var attempt int
	job, changed, err := s.Jobs.Update(ctx, req.JobID, func(j *domain.Job) (bool, error) {
		attempt = j.Attempt
		return j.Finish(-1, domain.StateCancelled, reason, nil, now), nil
	})
	if err != nil {
		return err
	}
	ctx, span := telemetry.Continue(ctx, s.Tel.Tracer, job.TraceParent, telemetry.SpanCancel,
		append(telemetry.JobAttrs(job), telemetry.AttrReason.String(reason))...)
	defer func() { telemetry.End(span, err) }()
	ctx = telemetry.WithJob(ctx, job.ID)
	// Release whatever the job holds, whether or not this delivery made the
	// change (a previous one may have crashed before releasing).
	if job.State == domain.StateCancelled {
		if err := s.releaseJob(ctx, job.ID, attempt); err != nil {
			return err
		}
		if err := s.forgetDrain(ctx, job.ID, attempt); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	s.Tel.Metrics.JobFinished(ctx, job)
	s.Log.InfoContext(ctx, "job cancelled", "job", job.ID, "reason", reason, "actor", actor)
	ev := events.ForJob(events.Cancelled, job, now)
	ev.Attempt, ev.Reason, ev.Timing, ev.Actor = attempt, reason, &job.Timing, actor
	return s.Bus.PublishEvent(ctx, ev)
}

// retryUnknown retries a request about an unknown job a bounded number of
// times (it may not be admitted yet), then drops it.
func retryUnknown(msg jetstream.Msg, err error) error {
	if md, mdErr := msg.Metadata(); mdErr == nil && md.NumDelivered < unknownJobRetries {
		return err
	}
	return errs.MarkPermanent(err)
}
