package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// followAssignments starts ranks for new assignments and stops ranks whose
// assignment disappears, until ctx ends or the watch breaks.
func (a *agent) followAssignments(ctx context.Context, epoch int64) error {
	for {
		err := a.watchAssignments(ctx, epoch)
		if ctx.Err() != nil {
			return nil
		}
		// A broken watch (a frozen or restarted etcd member) is not a lost
		// node: list again and carry on, as long as the lease holds.
		a.Log.Warn("assignment watch broken; listing again", "err", err)
		clock.Sleep(ctx, 200*time.Millisecond)
	}
}

// watchAssignments lists the node's assignments, starts the new ones,
// stops ranks whose assignment is gone, then follows changes until the
// watch breaks.
func (a *agent) watchAssignments(ctx context.Context, epoch int64) error {
	prefix := store.NodeAssignPrefix(a.cfg.Node.Name)
	resp, err := a.Etcd.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return errors.Wrap(err, "list assignments")
	}
	present := map[string]bool{}
	for _, kv := range resp.Kvs {
		present[string(kv.Key)] = true
		a.assigned(ctx, kv, epoch)
	}
	// Ranks running for assignments that are gone stop now.
	a.exec.keepOnly(func(jobID string) bool { return present[store.AssignKey(a.cfg.Node.Name, jobID)] }, "no longer assigned")

	w := store.Watch(ctx, a.Etcd, prefix, resp.Header.Revision, clientv3.WithPrefix())
	for wr := range w.C {
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypePut {
				a.assigned(ctx, ev.Kv, epoch)
			} else {
				jobID := store.LastSegment(string(ev.Kv.Key))
				a.exec.stop(jobID, "assignment released")
				a.exec.forget(jobID)
			}
		}
	}
	return errors.Wrap(w.Err(), "watch assignments")
}

// assigned handles one assignment: start it if new and for this
// registration; report it lost if it belongs to an earlier registration
// (this agent restarted and is not running those ranks).
func (a *agent) assigned(ctx context.Context, kv *mvccpb.KeyValue, epoch int64) {
	key := string(kv.Key)
	// Every field checked as the contract says (domain.DecodeAssignment:
	// a pull-only assignment without a container, say, is refused rather
	// than dereferenced), then against this node (checkAssignment). Nothing
	// of a malformed assignment runs; gang's launch barrier releases its
	// gang.
	as, err := domain.DecodeAssignment(kv.Value)
	if err != nil {
		a.Log.Warn("assignment refused", "key", key, "err", err)
		return
	}
	if err := checkAssignment(key, as, a.cfg.Node); err != nil {
		a.Log.Warn("assignment refused", "key", key, "err", err)
		a.refused(ctx, key, as, epoch, err)
		return
	}
	// An assignment of an earlier registration is never ours to run, even if
	// this process launched it before its lease was lost: report it lost so
	// gang requeues it. (Checked before "launched before", see stopAll.)
	stale := as.Epoch != epoch
	if !stale && a.exec.launchedBefore(as.JobID, as.Attempt) {
		return
	}
	if !stale && as.PullOnly {
		// The gang's pull phase: make the image present, report, start
		// nothing (pull.go).
		a.exec.beginPull(ctx, a.Tel.Tracer, as)
		return
	}
	// The assignment carries the job's trace from the reservation.
	ctx, span := telemetry.Continue(ctx, a.Tel.Tracer, as.TraceParent, telemetry.SpanLaunch,
		telemetry.AttrJobID.String(as.JobID), telemetry.AttrAttempt.Int(as.Attempt),
		telemetry.AttrNode.String(a.cfg.Node.Name), telemetry.AttrRanks.Int(len(as.Ranks)))
	defer span.End()
	ctx = telemetry.WithJob(ctx, as.JobID)
	if stale {
		a.report(ctx, domain.Report{JobID: as.JobID, Attempt: as.Attempt, Kind: domain.ReportLost,
			Reason: "agent restarted; these ranks are no longer running"})
		return
	}
	if err := a.exec.start(ctx, as, kv.CreateRevision); err != nil {
		telemetry.End(span, err)
		if errors.Is(err, errAssignmentGone) {
			// Released before it started: nothing to report (its delete
			// event follows in the watch).
			a.Log.InfoContext(ctx, "assignment released before its ranks started", "job", as.JobID, "attempt", as.Attempt)
			return
		}
		a.report(ctx, domain.Report{JobID: as.JobID, Attempt: as.Attempt, Kind: domain.ReportFailed,
			Rank: as.Ranks[0].Rank, ExitCode: 127, Reason: err.Error()})
		return
	}
	a.report(ctx, domain.Report{JobID: as.JobID, Attempt: as.Attempt, Kind: domain.ReportStarted})
}

// refused tells gang that this node refuses an assignment of its current
// registration (it decoded, so its job and attempt are known), with the
// field at fault: left unsaid, the gang would wait out its launch
// deadline and be requeued, a restart spent, with no word of why.
func (a *agent) refused(ctx context.Context, key string, as domain.Assignment, epoch int64, why error) {
	// Only for the job its key names, of this node: an assignment that
	// names another job or node says nothing trustworthy about either.
	if assignmentIsFor(key, as, a.cfg.Node.Name) != nil {
		return
	}
	if as.Epoch != epoch || a.exec.launchedBefore(as.JobID, as.Attempt) {
		return
	}
	reason := fmt.Sprintf("node %s refused its assignment: %v", a.cfg.Node.Name, why)
	r := domain.Report{JobID: as.JobID, Attempt: as.Attempt, Kind: domain.ReportFailed, ExitCode: 127, Reason: reason}
	if as.PullOnly {
		r = domain.Report{JobID: as.JobID, Attempt: as.Attempt, Kind: domain.ReportPullFailed, Reason: reason}
	} else if len(as.Ranks) > 0 {
		r.Rank = as.Ranks[0].Rank
	}
	a.report(ctx, r)
}

// report publishes a report to gang, retrying briefly: reports carry
// de-duplication IDs, so retries never double-count.
func (a *agent) report(ctx context.Context, r domain.Report) {
	r.Node = a.cfg.Node.Name
	r.Time = time.Now().UTC()
	r.Reason = domain.BoundReason(r.Reason)
	msgID := r.MsgID()
	for i := range 10 {
		// On the node's own subject: with auth, only this node may publish
		// there, and gang refuses a report naming another node.
		err := a.Bus.PublishJSON(ctx, subjects.ReportFrom(r.Node), msgID, r)
		if err == nil || ctx.Err() != nil {
			return
		}
		a.Log.WarnContext(ctx, "report not published, retrying", "job", r.JobID, "kind", r.Kind, "err", err)
		clock.Sleep(ctx, time.Duration(i+1)*200*time.Millisecond)
	}
}
