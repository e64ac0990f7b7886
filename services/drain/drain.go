package drain

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// handleDrainRequest starts a drain asked for on lockstep.v1.jobs.drain
// (Lockstep's own, and requests without auth) or drain.<user>.
func (s *service) handleDrainRequest(ctx context.Context, msg jetstream.Msg, req domain.DrainRequest) error {
	actor, ok, err := s.authorize(ctx, msg, subjects.Drain, req.JobID, string(req.Kind)+" drain", req.Kind)
	if !ok {
		return err
	}
	err = s.startDrain(ctx, req, requestActor(actor, req.Kind))
	if errs.IsNotFound(err) {
		return retryUnknown(msg, err)
	}
	return err
}

// startDrain begins draining a job: the job record first, then the drain
// record (agents see it and signal the ranks), then the draining event. In
// that order a rank that dies of the signal at once is the drain's business
// when gang reads the record, not a failure; a drain whose record was never
// written (a replica that stopped between the two) is taken again from the
// job record (orphanedDrains). A job not running yet has nothing to
// checkpoint: a cancel ends it, anything else waits for it to run (a
// pending job is simply not started). Asking twice makes one drain. actor
// is who asked (Drain.Actor).
func (s *service) startDrain(ctx context.Context, req domain.DrainRequest, actor string) (err error) {
	now := s.cfg.Now().UTC()
	job, rev, err := s.Jobs.Get(ctx, req.JobID)
	if err != nil {
		return err
	}
	// The drain joins the job's trace (linked to the request's when that is
	// another), and its record carries it to the agents and to whichever
	// replica completes it.
	ctx, span := s.drainSpan(ctx, job, req.Kind, req.Then)
	defer func() { telemetry.End(span, err) }()
	reason := req.Reason
	if reason == "" {
		reason = string(req.Kind)
	}
	switch {
	case job.State.Terminal():
		return nil
	case job.State == domain.StatePending || job.State == domain.StateReserved:
		if req.Then != domain.ThenCancel {
			return nil
		}
		return s.cancelNow(ctx, job.ID, reason, actor)
	}
	attempt := job.Attempt
	d := domain.Drain{Kind: req.Kind, Then: req.Then, Reason: reason, RequestedAt: now, Deadline: now.Add(job.Spec.Grace()), Actor: actor}
	job, _, err = s.Jobs.UpdateAt(ctx, job, rev, func(j *domain.Job) (bool, error) {
		return j.StartDrain(attempt, d), nil
	})
	if err != nil {
		return err
	}
	if job.Attempt != attempt || job.Drain == nil || !job.State.Active() {
		// The attempt ended meanwhile: nothing to drain. A cancel is
		// taken again from the job as it is now (pending: cancelled at
		// once; a new attempt: drained).
		if req.Then == domain.ThenCancel && !job.State.Terminal() {
			return drainEndedFirst(job.ID)
		}
		return nil
	}
	created, err := s.recordDrain(ctx, job)
	if err != nil || created {
		return err
	}
	// A drain is under way (or the gang went as the record was written):
	// only a cancel can change its outcome.
	if req.Then != domain.ThenCancel {
		return nil
	}
	return s.upgradeToCancel(ctx, job.ID, reason, actor)
}

// recordDrain writes the drain record of the drain job's record holds
// (this request's, or an earlier one's that it joins or resumes), which
// agents act on, then announces it. created is false when a drain record
// exists already, or when the attempt's allocation is gone: its gang
// ended, and a record written now would outlive it.
func (s *service) recordDrain(ctx context.Context, job domain.Job) (created bool, err error) {
	rec := domain.DrainRecord{JobID: job.ID, Attempt: job.Attempt, Drain: *job.Drain, Signal: job.Spec.Signal(), Expected: expectedAcks(job),
		TraceParent: telemetry.TraceParent(ctx)}
	if created, err = s.createRecord(ctx, rec); err != nil || !created {
		return created, err
	}
	// The attempt can end between the job record's read and the drain
	// record's write (its gang failed, a plain cancel): the record then
	// goes, and nothing is announced.
	current, _, err := s.Jobs.Get(ctx, job.ID)
	if err != nil {
		return true, err
	}
	if current.Attempt != rec.Attempt || current.Drain == nil || !current.State.Active() {
		return true, s.forgetDrain(ctx, job.ID, rec.Attempt)
	}
	s.Log.InfoContext(ctx, "draining", "job", job.ID, "attempt", rec.Attempt, "reason", rec.Drain.Reason, "then", rec.Drain.Then,
		"grace", rec.Drain.Deadline.Sub(rec.Drain.RequestedAt), "actor", rec.Drain.Actor)
	ev := events.ForJob(events.Draining, current, rec.Drain.RequestedAt)
	ev.Reason, ev.Drain, ev.Signal, ev.Actor = rec.Drain.Reason, &rec.Drain, rec.Signal, rec.Drain.Actor
	return true, s.Bus.PublishEvent(ctx, ev)
}

// drainSpan starts the span of a drain's start (or resumption) in the
// job's trace, and names the job in ctx.
func (s *service) drainSpan(ctx context.Context, job domain.Job, kind domain.DrainKind, then domain.DrainThen) (context.Context, trace.Span) {
	ctx, span := telemetry.Continue(ctx, s.Tel.Tracer, job.TraceParent, telemetry.SpanDrain,
		append(telemetry.JobAttrs(job), telemetry.AttrDrainKind.String(string(kind)), telemetry.AttrDrainThen.String(string(then)))...)
	return telemetry.WithJob(ctx, job.ID), span
}

// expectedAcks lists the ranks that must acknowledge.
func expectedAcks(j domain.Job) []int {
	if j.Spec.Checkpoint.Ack == "rank0" {
		return []int{0}
	}
	out := make([]int, j.Spec.Ranks())
	for i := range out {
		out[i] = i
	}
	return out
}

// createRecord writes the drain record unless one exists for the job, or
// the attempt's allocation is gone (released, or another attempt's):
// whoever releases a gang deletes its drain record after the release, so
// a record written once the release began could stay behind it.
func (s *service) createRecord(ctx context.Context, rec domain.DrainRecord) (bool, error) {
	key, allocKey := store.DrainKey(rec.JobID), store.AllocKey(rec.JobID)
	resp, err := s.Etcd.Get(ctx, allocKey)
	if err != nil {
		return false, errors.Wrapf(err, "read the allocation of %s", errors.Safe(rec.JobID))
	}
	if len(resp.Kvs) == 0 {
		return false, nil
	}
	// A malformed allocation still guards the write: the drain that
	// finds it ends at once (lifecycle.JudgeDrain) and releases it.
	if a, err := store.DecodeAllocation(allocKey, resp.Kvs[0].Value); err == nil && a.Attempt != rec.Attempt {
		return false, nil
	}
	txn, err := s.Etcd.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
			clientv3.Compare(clientv3.CreateRevision(allocKey), "=", resp.Kvs[0].CreateRevision)).
		Then(clientv3.OpPut(key, store.MustJSON(rec))).Commit()
	if err != nil {
		return false, errors.Wrapf(err, "record drain of %s", errors.Safe(rec.JobID))
	}
	return txn.Succeeded, nil
}

// upgradeToCancel makes a drain under way end in a cancel; actor, who
// decided the outcome now, becomes the drain's actor.
func (s *service) upgradeToCancel(ctx context.Context, jobID, reason, actor string) error {
	for range 10 {
		rec, rev, found, err := store.GetDrain(ctx, s.Etcd, jobID)
		if err != nil {
			return err
		}
		if !found {
			// The drain ended since the job was read (requeued, say): the
			// request is taken again from the job as it is now.
			return drainEndedFirst(jobID)
		}
		upgrade := domain.Drain{Then: domain.ThenCancel, Reason: reason, Actor: actor}
		if rec.Drain.Then != domain.ThenCancel {
			rec.Drain.Then = domain.ThenCancel
			rec.Drain.Reason = domain.ThenCancelReason(rec.Drain.Reason, reason)
			rec.Drain.Actor = actor
			resp, err := s.Etcd.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(store.DrainKey(jobID)), "=", rev)).
				Then(clientv3.OpPut(store.DrainKey(jobID), store.MustJSON(rec))).Commit()
			if err != nil {
				return errors.Wrap(err, "upgrade drain to cancel")
			}
			if !resp.Succeeded {
				continue
			}
		}
		job, _, err := s.Jobs.Update(ctx, jobID, func(j *domain.Job) (bool, error) {
			return j.StartDrain(rec.Attempt, upgrade), nil
		})
		if err != nil {
			return err
		}
		if job.State == domain.StateCancelled || (job.Attempt == rec.Attempt && job.Drain != nil && job.Drain.Then == domain.ThenCancel) {
			return nil
		}
		// The drain completed (as a requeue) between the two writes: the
		// cancel must not be lost with it.
		return drainEndedFirst(jobID)
	}
	return errs.MarkConflict(errors.Newf("drain record of %s kept changing", errors.Safe(jobID)))
}

// drainEndedFirst is the retryable error of a cancel that reached a drain
// as it ended: redelivered, the request finds the job as the drain left it
// (pending again: cancelled at once; running a new attempt: drained).
func drainEndedFirst(jobID string) error {
	return errs.MarkConflict(errors.Newf("the drain of %s ended before the cancel reached it; taking the cancel again", errors.Safe(jobID)))
}

// cancelNow cancels a job that has nothing to checkpoint.
func (s *service) cancelNow(ctx context.Context, jobID, reason, actor string) error {
	now := s.cfg.Now().UTC()
	var attempt int
	job, changed, err := s.Jobs.Update(ctx, jobID, func(j *domain.Job) (bool, error) {
		attempt = j.Attempt
		return j.Finish(-1, domain.StateCancelled, reason, nil, now), nil
	})
	if err != nil {
		return err
	}
	if err := s.releaseJob(ctx, jobID, attempt); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	s.Tel.Metrics.JobFinished(ctx, job)
	ev := events.ForJob(events.Cancelled, job, now)
	ev.Attempt, ev.Reason, ev.Timing, ev.Actor = attempt, reason, &job.Timing, actor
	return s.Bus.PublishEvent(ctx, ev)
}
