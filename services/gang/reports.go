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
	// Encode the record once: the barrier's detach writes it too.
	var ops []clientv3.Op
	if barrier {
		ops = store.AllocationDetach(a)
	} else {
		ops = []clientv3.Op{clientv3.OpPut(store.AllocKey(a.JobID), store.MustJSON(a), clientv3.WithIgnoreLease())}
	}
	resp, err := s.txns.Txn(ctx).
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

func withExit(m map[string]int, node string, code int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[node] = code
	return m
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
