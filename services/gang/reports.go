package gang

import (
	"context"
	"fmt"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// handleReport applies one agent report to the job's allocation. The node
// a report is about must be the one whose subject it came on (with auth,
// the server lets only that node publish there) and must hold the
// report's attempt: a node cannot end, start or fail another's gang.
func (s *service) handleReport(ctx context.Context, msg jetstream.Msg) error {
	// Every field checked (kind, bounds, the pull numbers); whether the
	// node holds that attempt is for the allocation to say, below.
	r, err := domain.DecodeReport(msg.Data())
	if err != nil {
		return errs.MarkPermanent(errors.Wrap(err, "agent report"))
	}
	ctx = telemetry.WithJob(ctx, r.JobID)
	trace.SpanFromContext(ctx).SetAttributes(telemetry.AttrAttempt.Int(r.Attempt),
		telemetry.AttrNode.String(r.Node), telemetry.AttrReport.String(string(r.Kind)))
	if from := subjects.NodeOf(subjects.Report, msg.Subject()); from != r.Node {
		return s.refuseReport(ctx, r, refusedWrongNode, fmt.Sprintf("it came on %s", msg.Subject()))
	}
	// The placement of an attempt never changes, so a remembered
	// allocation of the same attempt settles it without a read; otherwise
	// applyReports checks against etcd.
	if a, ok := s.rememberedAllocation(r.JobID); ok && a.Attempt == r.Attempt && !a.Placement.Places(r.Node) {
		return s.refuseReport(ctx, r, refusedNotPlaced, "the node holds no part of that attempt")
	}
	return s.submitReport(ctx, r)
}

// applyBatch applies reports of one job. Another replica may write the
// allocation meanwhile; a lost compare-and-set is simply re-applied on a
// fresh read.
func (s *service) applyBatch(ctx context.Context, batch []domain.Report) error {
	for i := 0; ; i++ {
		err := s.applyReports(ctx, batch, i > 0)
		if !errs.IsConflict(err) || i == 20 {
			return err
		}
	}
}

// progress is what a batch of reports does to an allocation short of
// ending the gang.
type progress struct {
	next          domain.Allocation // the allocation with the batch's starts and clean exits
	changed       bool              // next differs from the allocation
	startsChanged bool              // a node is newly started (the barrier may follow)
	barrier       bool              // next passes the launch barrier
	started       bool              // the batch holds a started report
	// ending is the first report that ends the gang: a failed rank, a
	// non-zero exit or lost ranks.
	ending *domain.Report
	// Of a container gang's pull phase (pull.go): the pull-failed reports
	// of the batch; pullDone when every node now has the image (the ranks
	// start); pullFail the reason the attempt fails for.
	pullFailed []lifecycle.PullFailure
	pullDone   bool
	pullFail   string
	// exits holds every exit code the batch reports, by node.
	exits map[string]int
}

// fold applies a batch of reports (all of a's attempt) to a copy of a. An
// exit implies its node started: reports of one node can overtake each
// other across workers and replicas.
func fold(a domain.Allocation, batch []domain.Report) progress {
	p := progress{next: cloneAllocation(a), exits: map[string]int{}}
	n := &p.next
	start := func(node string) {
		if n.Pull.Pending() {
			// No rank starts before its gang pulled: a start report then
			// is not believed.
			return
		}
		if n.Started == nil {
			n.Started = map[string]bool{}
		}
		if !n.Started[node] {
			n.Started[node] = true
			p.changed, p.startsChanged = true, true
		}
	}
	for i, r := range batch {
		switch r.Kind {
		case domain.ReportStarted:
			p.started = true
			start(r.Node)
		case domain.ReportExited, domain.ReportFailed:
			start(r.Node)
			p.exits[r.Node] = r.ExitCode
			if r.Kind == domain.ReportExited && r.ExitCode == 0 {
				if _, ok := n.Exited[r.Node]; !ok {
					n.Exited = withExit(n.Exited, r.Node, 0)
					p.changed = true
				}
			} else if p.ending == nil {
				p.ending = &batch[i]
			}
		case domain.ReportLost:
			if p.ending == nil {
				p.ending = &batch[i]
			}
		case domain.ReportPulled, domain.ReportPullFailed:
			p.foldPull(r)
		}
	}
	if n.State == domain.AllocReserved && !n.Pull.Pending() && n.AllStarted() {
		n.State = domain.AllocRunning
		p.changed, p.barrier = true, true
	}
	return p
}

// applyReports applies a batch of one job's reports: first what they
// record (starts, the launch barrier, clean exits: one compare-and-set),
// then what ends the gang (the last clean exit, a failure, lost ranks).
// fresh reads the allocation from etcd instead of memory.
func (s *service) applyReports(ctx context.Context, batch []domain.Report, fresh bool) error {
	jobID := batch[0].JobID
	a, rev, found, cached, err := s.knownAllocation(ctx, jobID, fresh)
	if store.IsMalformed(err) {
		// Not a reason to redeliver the reports for ever: release it.
		return s.dropMalformed(ctx, jobID, err)
	}
	if err != nil {
		return err
	}
	var mine []domain.Report
	for _, r := range batch {
		if found && r.Attempt == a.Attempt {
			mine = append(mine, r)
		}
	}
	if cached && len(mine) < len(batch) {
		// Memory may be behind (a newer attempt reserved elsewhere): only
		// etcd may say a report is stale.
		return errs.MarkConflict(errors.New("re-read the allocation"))
	}
	mine = slices.DeleteFunc(mine, func(r domain.Report) bool {
		if a.Placement.Places(r.Node) {
			return false
		}
		// Batched with other messages: dropped (and acknowledged) rather
		// than terminated on its own.
		_ = s.refuseReport(ctx, r, refusedNotPlaced, "the node holds no part of that attempt")
		return true
	})
	if len(mine) == 0 {
		return nil // released already, or an older attempt: nothing to do
	}
	p := fold(a, mine)
	p.judgePull(s.cfg.Now().UTC(), s.cfg.LaunchTimeout)
	if p.pullFail != "" && p.ending == nil {
		return s.failPull(ctx, a, rev, p.pullFail)
	}
	allExited := p.next.AllExited() && p.ending == nil
	switch {
	case p.changed && p.pullDone:
		if rev, err = s.startAfterPull(ctx, p.next, rev); err != nil {
			return err
		}
		a = p.next
	case p.changed && (p.startsChanged || !allExited):
		// Record starts before any end, so running precedes the end in
		// the record and the events. The last clean exit is not written:
		// the release that follows deletes the allocation anyway.
		if rev, err = s.recordProgress(ctx, p.next, rev, p.barrier); err != nil {
			return err
		}
		a = p.next
		if p.barrier {
			if err := s.announceRunning(ctx, a); err != nil {
				return err
			}
		}
	case p.changed:
		a = p.next
	case p.started && a.State == domain.AllocRunning:
		// A start seen again after the barrier: a crash may have come
		// between the barrier and its announcement.
		if err := s.announceRunning(ctx, a); err != nil {
			return err
		}
	}
	if e := p.ending; e != nil {
		if e.Kind == domain.ReportLost {
			return s.requeue(ctx, a, fmt.Sprintf("ranks lost on node %s: %s", e.Node, e.Reason))
		}
		code := e.ExitCode
		reason := fmt.Sprintf("ranks on node %s exited with code %d", e.Node, code)
		if e.Kind == domain.ReportFailed {
			reason = fmt.Sprintf("rank %d on node %s exited with code %d", e.Rank, e.Node, code)
			if e.Reason != "" {
				reason += " (" + e.Reason + ")"
			}
		}
		draining, err := s.finish(ctx, a, rev, domain.StateFailed, events.Failed, reason, &code, true)
		if err != nil || !draining {
			return err
		}
		return s.recordExits(ctx, a, rev, p.exits)
	}
	if !allExited {
		return nil
	}
	zero := 0
	draining, err := s.finish(ctx, a, rev, domain.StateSucceeded, events.Succeeded, "", &zero, true)
	if err != nil || !draining {
		return err
	}
	return s.recordExits(ctx, a, rev, p.exits)
}

// recordProgress writes a batch's starts and exits with a compare-and-set
// on the allocation; with barrier, it also detaches every key of the
// allocation from the reservation lease (durable for the job's life). It
// returns the allocation's new ModRevision.
func (s *service) recordProgress(ctx context.Context, a domain.Allocation, rev int64, barrier bool) (int64, error) {
	ops := []clientv3.Op{clientv3.OpPut(store.AllocKey(a.JobID), store.MustJSON(a), clientv3.WithIgnoreLease())}
	if barrier {
		ops = store.AllocationDetach(a)
	}
	resp, err := s.Etcd.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(store.AllocKey(a.JobID)), "=", rev)).
		Then(ops...).Commit()
	if err != nil {
		return 0, errors.Wrapf(err, "record agent reports for job %s", errors.Safe(a.JobID))
	}
	if !resp.Succeeded {
		return 0, s.allocationChanged(a.JobID)
	}
	if barrier {
		s.leases.Return(clientv3.LeaseID(a.Lease), borrower(a))
	}
	s.remember(a, resp.Header.Revision)
	return resp.Header.Revision, nil
}

// recordExits stores exits (any code) on the allocation of a gang being
// drained: ranks exiting is then the drain's business (typically a trainer
// that checkpointed and quit); drain ends the gang.
func (s *service) recordExits(ctx context.Context, a domain.Allocation, rev int64, exits map[string]int) error {
	for node, code := range exits {
		a.Exited = withExit(a.Exited, node, code)
	}
	_, err := s.recordProgress(ctx, a, rev, false)
	return err
}

// allocationChanged answers a compare-and-set on a job's allocation that
// lost: the remembered copy is stale, and the reports are applied again on
// a fresh read.
func (s *service) allocationChanged(jobID string) error {
	s.forget(jobID)
	return errs.MarkConflict(errors.Newf("allocation of job %s changed; retrying report", errors.Safe(jobID)))
}

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

func withExit(m map[string]int, node string, code int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[node] = code
	return m
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
	// follow it and not each other, so they travel together.
	ev := events.ForJob(t, job, job.EndedAt)
	ev.Reason, ev.ExitCode, ev.Timing = job.Reason, job.ExitCode, &job.Timing
	announced := s.Bus.PublishEventAsync(ctx, ev)
	return false, errors.CombineErrors(s.release(ctx, a, rev), announced())
}

// release deletes the allocation if it is still the one read at rev, and
// otherwise whatever allocation that attempt holds now.
func (s *service) release(ctx context.Context, a domain.Allocation, rev int64) error {
	s.forget(a.JobID)
	if rev > 0 {
		ok, err := store.Release(ctx, s.Etcd, a, rev)
		if ok {
			// After the barrier the lease went back already and may be
			// lent again: Return ignores a borrower it no longer lends to.
			s.leases.Return(clientv3.LeaseID(a.Lease), borrower(a))
		}
		if err != nil || ok {
			return err
		}
	}
	return s.releaseJob(ctx, a.JobID, a.Attempt)
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

// rememberedAllocation is the allocation of jobID as last seen here, if
// any, without reading etcd. Only its attempt and placement may be relied
// on: those never change for an attempt.
func (s *service) rememberedAllocation(jobID string) (domain.Allocation, bool) {
	rs := s.replica()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k, ok := rs.known[jobID]
	return k.a, ok
}
