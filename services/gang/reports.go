package gang

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/errs"
	"github.com/lockstep-dev/lockstep/shared/events"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/telemetry"
)

// handleReport applies one agent report to the job's allocation.
func (s *service) handleReport(ctx context.Context, msg jetstream.Msg) error {
	var r domain.Report
	if err := json.Unmarshal(msg.Data(), &r); err != nil || r.JobID == "" || r.Node == "" {
		return errs.MarkPermanent(errors.Newf("malformed agent report: %v", err))
	}
	ctx = telemetry.WithJob(ctx, r.JobID)
	trace.SpanFromContext(ctx).SetAttributes(telemetry.AttrAttempt.Int(r.Attempt),
		telemetry.AttrNode.String(r.Node), telemetry.AttrReport.String(string(r.Kind)))
	// Reports of one gang race each other (one per node, handled by several
	// workers and replicas); a lost compare-and-set is simply re-applied.
	for i := 0; ; i++ {
		err := s.applyReport(ctx, r)
		if !errs.IsConflict(err) || i == 20 {
			return err
		}
	}
}

func (s *service) applyReport(ctx context.Context, r domain.Report) error {
	a, rev, found, err := store.GetAllocation(ctx, s.etcd, r.JobID)
	if err != nil {
		return err
	}
	if !found || a.Attempt != r.Attempt {
		return nil // released already, or an older attempt: nothing to do
	}
	if (r.Kind == domain.ReportExited || r.Kind == domain.ReportFailed) && !a.Started[r.Node] {
		// Reports of one node can overtake each other across workers; an
		// exit implies the start. Record it (possibly passing the barrier
		// and announcing running), then re-apply the exit.
		if err := s.started(ctx, a, rev, r.Node); err != nil {
			return err
		}
		return errs.MarkConflict(errors.New("re-apply exit after recording start"))
	}
	if r.Kind == domain.ReportExited || r.Kind == domain.ReportFailed {
		job, _, err := s.jobs.Get(ctx, r.JobID)
		if err != nil {
			return err
		}
		if job.Drain != nil && job.Attempt == a.Attempt {
			// Draining: ranks exiting is the drain's business (typically a
			// trainer that checkpointed and quit). Record it; drain ends it.
			return s.recordExit(ctx, a, rev, r.Node, r.ExitCode)
		}
	}
	switch r.Kind {
	case domain.ReportStarted:
		return s.started(ctx, a, rev, r.Node)
	case domain.ReportExited:
		return s.exited(ctx, a, rev, r)
	case domain.ReportFailed:
		code := r.ExitCode
		reason := fmt.Sprintf("rank %d on node %s exited with code %d", r.Rank, r.Node, r.ExitCode)
		if r.Reason != "" {
			reason += " (" + r.Reason + ")"
		}
		return s.fail(ctx, a, reason, &code)
	case domain.ReportLost:
		return s.requeue(ctx, a, fmt.Sprintf("ranks lost on node %s: %s", r.Node, r.Reason))
	}
	return errs.MarkPermanent(errors.Newf("unknown report kind %q", r.Kind))
}

// started records one node's ranks as running; the last one passes the
// launch barrier: the allocation is rewritten without its lease, so it is
// durable for the job's life, and the job becomes running.
func (s *service) started(ctx context.Context, a domain.Allocation, rev int64, node string) error {
	if a.Started == nil {
		a.Started = map[string]bool{}
	}
	if a.Started[node] && a.State == domain.AllocRunning {
		return s.announceRunning(ctx, a)
	}
	a.Started[node] = true
	var ops []clientv3.Op
	if a.AllStarted() {
		job, _, err := s.jobs.Get(ctx, a.JobID)
		if err != nil {
			return err
		}
		a.State = domain.AllocRunning
		// Puts without a lease option detach the keys from the lease.
		ops = store.AllocationPuts(a, assignments(job, a))
	} else {
		ops = []clientv3.Op{clientv3.OpPut(store.AllocKey(a.JobID), store.MustJSON(a), clientv3.WithIgnoreLease())}
	}
	resp, err := s.etcd.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(store.AllocKey(a.JobID)), "=", rev)).
		Then(ops...).Commit()
	if err != nil {
		return errors.Wrapf(err, "record ranks started for job %s", errors.Safe(a.JobID))
	}
	if !resp.Succeeded {
		return errs.MarkConflict(errors.Newf("allocation of job %s changed; retrying report", errors.Safe(a.JobID)))
	}
	if a.State == domain.AllocRunning {
		return s.announceRunning(ctx, a)
	}
	return nil
}

func (s *service) announceRunning(ctx context.Context, a domain.Allocation) error {
	now := s.cfg.Now().UTC()
	job, changed, err := s.jobs.Update(ctx, a.JobID, func(j *domain.Job) (bool, error) {
		return j.Run(a.Attempt, now), nil
	})
	if err != nil {
		return err
	}
	if changed {
		s.tel.Metrics.JobRunning(ctx, job)
	}
	if job.Attempt != a.Attempt || job.State != domain.StateRunning {
		return nil
	}
	ev := events.ForJob(events.Running, job, job.RunningAt)
	ev.Placement = &a.Placement
	return s.bus.PublishEvent(ctx, ev)
}

// exited records one node's ranks as done; when every node is, the job
// succeeded (failures arrive as ReportFailed and end the gang earlier).
func (s *service) exited(ctx context.Context, a domain.Allocation, rev int64, r domain.Report) error {
	if r.ExitCode != 0 {
		code := r.ExitCode
		return s.fail(ctx, a, fmt.Sprintf("ranks on node %s exited with code %d", r.Node, code), &code)
	}
	a.Exited = withExit(a.Exited, r.Node, 0)
	if !a.AllExited() {
		return s.recordExit(ctx, a, rev, r.Node, 0)
	}
	zero := 0
	return s.finish(ctx, a, domain.StateSucceeded, events.Succeeded, "", &zero)
}

// recordExit stores one node's exit on the allocation.
func (s *service) recordExit(ctx context.Context, a domain.Allocation, rev int64, node string, code int) error {
	a.Exited = withExit(a.Exited, node, code)
	resp, err := s.etcd.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(store.AllocKey(a.JobID)), "=", rev)).
		Then(clientv3.OpPut(store.AllocKey(a.JobID), store.MustJSON(a), clientv3.WithIgnoreLease())).Commit()
	if err != nil {
		return errors.Wrapf(err, "record ranks exited for job %s", errors.Safe(a.JobID))
	}
	if !resp.Succeeded {
		return errs.MarkConflict(errors.Newf("allocation of job %s changed; retrying report", errors.Safe(a.JobID)))
	}
	return nil
}

func withExit(m map[string]int, node string, code int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[node] = code
	return m
}

// fail ends the gang as failed and releases it on every node.
func (s *service) fail(ctx context.Context, a domain.Allocation, reason string, code *int) error {
	return s.finish(ctx, a, domain.StateFailed, events.Failed, reason, code)
}

// finish records a terminal state first, then releases the allocation, then
// announces: a crash in between leaves an allocation of a finished job,
// which the reconciler releases.
func (s *service) finish(ctx context.Context, a domain.Allocation, state domain.State, t events.Type, reason string, code *int) error {
	if a.State == domain.AllocRunning {
		// The worker that passed the barrier may not have recorded it on the
		// job yet; running must precede the end in the record and events.
		if err := s.announceRunning(ctx, a); err != nil {
			return err
		}
	}
	now := s.cfg.Now().UTC()
	job, changed, err := s.jobs.Update(ctx, a.JobID, func(j *domain.Job) (bool, error) {
		return j.Finish(a.Attempt, state, reason, code, now), nil
	})
	if err != nil {
		return err
	}
	if changed {
		s.tel.Metrics.JobFinished(ctx, job)
	}
	if err := store.ReleaseJob(ctx, s.etcd, a.JobID, a.Attempt); err != nil {
		return err
	}
	if job.Attempt != a.Attempt || job.State != state {
		return nil
	}
	ev := events.ForJob(t, job, job.EndedAt)
	ev.Reason, ev.ExitCode, ev.Timing = job.Reason, job.ExitCode, &job.Timing
	return s.bus.PublishEvent(ctx, ev)
}

// requeue sends the job back to the queue (or fails it when its restart
// budget is spent), then releases the old allocation. It often runs with no
// message behind it (reconciler, node loss): its span joins the job's trace
// through the allocation.
func (s *service) requeue(ctx context.Context, a domain.Allocation, reason string) (err error) {
	ctx, span := telemetry.Continue(ctx, s.tel.Tracer, a.TraceParent, telemetry.SpanRequeue,
		telemetry.AttrJobID.String(a.JobID), telemetry.AttrAttempt.Int(a.Attempt), telemetry.AttrReason.String(reason))
	defer func() { telemetry.End(span, err) }()
	ctx = telemetry.WithJob(ctx, a.JobID)
	now := s.cfg.Now().UTC()
	var failed bool
	job, changed, err := s.jobs.Update(ctx, a.JobID, func(j *domain.Job) (bool, error) {
		var ch bool
		ch, failed = j.Requeue(a.Attempt, reason, now)
		return ch, nil
	})
	if err != nil {
		return err
	}
	if err := store.ReleaseJob(ctx, s.etcd, a.JobID, a.Attempt); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	s.log.InfoContext(ctx, "gang lost", "job", a.JobID, "attempt", a.Attempt, "reason", reason, "failed", failed)
	if failed {
		s.tel.Metrics.JobFinished(ctx, job)
		ev := events.ForJob(events.Failed, job, now)
		ev.Attempt, ev.Reason, ev.Timing = a.Attempt, job.Reason, &job.Timing
		return s.bus.PublishEvent(ctx, ev)
	}
	ev := events.ForJob(events.Requeued, job, now)
	ev.Attempt, ev.Reason, ev.Timing = a.Attempt, reason, &job.Timing
	return s.bus.PublishEvent(ctx, ev)
}
