package gang

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// The pull phase of a container gang (domain/pull.go): the reservation
// writes the assignments with PullOnly and the allocation with a
// PullPhase; agents report pulled (or pull-failed); lifecycle.JudgePull
// decides; once every node has the image, one Txn records the phase's end
// and clears PullOnly on every assignment, and the ranks start. A job
// without a container has no phase: its assignments start at once.

// pullPhaseOf is the pull phase a job's reservation at now begins with;
// nil for a job without a container.
func pullPhaseOf(spec jobspec.Spec, now time.Time) *domain.PullPhase {
	if spec.Container == nil {
		return nil
	}
	c := spec.Container.WithDefaults()
	t := c.PullTimeout.Duration()
	return &domain.PullPhase{Image: c.Image, Timeout: t, Deadline: now.Add(t)}
}

// foldPull records a pulled or pull-failed report on the next allocation
// (during its pull phase; after it, or without one, a report is stale and
// changes nothing). The report's node was checked against the allocation.
func (p *progress) foldPull(r domain.Report) {
	n := &p.next
	if !n.Pull.Pending() {
		return
	}
	if r.Kind == domain.ReportPullFailed {
		p.pullFailed = append(p.pullFailed, lifecycle.PullFailure{Node: r.Node, Message: r.Reason})
		return
	}
	if _, ok := n.Pull.Nodes[r.Node]; ok {
		return
	}
	if n.Pull.Nodes == nil {
		n.Pull.Nodes = map[string]domain.NodePull{}
	}
	n.Pull.Nodes[r.Node] = domain.NodePull{Took: time.Duration(r.PullMillis) * time.Millisecond, Bytes: r.ImageBytes, Pulled: r.Pulled}
	p.changed = true
}

// judgePull applies lifecycle.JudgePull to a batch's progress: with every
// node pulled, the phase ends now and the launch timeout starts; a failed
// pull (or one past its deadline) sets pullFail.
func (p *progress) judgePull(now time.Time, launchTimeout time.Duration) {
	switch v := lifecycle.JudgePull(p.next, p.pullFailed, now); v.Step {
	case lifecycle.PullStart:
		p.next.Pull.DoneAt, p.next.LaunchDeadline = now, now.Add(launchTimeout)
		p.changed, p.pullDone = true, true
	case lifecycle.PullFail:
		p.pullFail = v.Reason
	}
}

// startAfterPull writes the end of a's pull phase (a read at rev) and
// clears PullOnly on every assignment of the gang, in one Txn guarded by
// the allocation's ModRevision: every agent sees its assignment change
// and starts its ranks. The keys keep the reservation lease (the launch
// barrier detaches them). It returns the allocation's new ModRevision.
func (s *service) startAfterPull(ctx context.Context, a domain.Allocation, rev int64) (int64, error) {
	guard := clientv3.Compare(clientv3.ModRevision(store.AllocKey(a.JobID)), "=", rev)
	gets := make([]clientv3.Op, len(a.Placement.Nodes))
	for i, np := range a.Placement.Nodes {
		gets[i] = clientv3.OpGet(store.AssignKey(np.Node, a.JobID))
	}
	read, err := s.Etcd.Txn(ctx).If(guard).Then(gets...).Commit()
	if err != nil {
		return 0, errors.Wrapf(err, "read the assignments of job %s", errors.Safe(a.JobID))
	}
	if !read.Succeeded {
		return 0, s.allocationChanged(a.JobID)
	}
	keep := clientv3.WithIgnoreLease()
	puts := []clientv3.Op{clientv3.OpPut(store.AllocKey(a.JobID), store.MustJSON(a), keep)}
	for i, np := range a.Placement.Nodes {
		as, err := ownAssignment(read.Responses[i].GetResponseRange().Kvs, a, np.Node)
		if err != nil {
			// Not retried: the gang waits out its pull deadline, and the
			// reconciler fails it then.
			return 0, errs.MarkPermanent(err)
		}
		as.PullOnly = false
		puts = append(puts, clientv3.OpPut(store.AssignKey(np.Node, a.JobID), store.MustJSON(as), keep))
	}
	resp, err := s.Etcd.Txn(ctx).If(guard).Then(puts...).Commit()
	if err != nil {
		return 0, errors.Wrapf(err, "start the ranks of job %s after the pull", errors.Safe(a.JobID))
	}
	if !resp.Succeeded {
		return 0, s.allocationChanged(a.JobID)
	}
	s.remember(a, resp.Header.Revision)
	s.tracePull(ctx, a)
	s.Log.InfoContext(ctx, "image on every node; starting ranks", "job", a.JobID, "attempt", a.Attempt,
		"image", a.Pull.Image, "took", a.Pull.DoneAt.Sub(a.ReservedAt))
	return resp.Header.Revision, nil
}

// ownAssignment decodes the stored assignment of node and checks it is
// the gang's: etcd values are input like any other.
func ownAssignment(kvs []*mvccpb.KeyValue, a domain.Allocation, node string) (domain.Assignment, error) {
	if len(kvs) == 0 {
		return domain.Assignment{}, errors.Newf("job %s: no assignment on node %s while its allocation holds", a.JobID, node)
	}
	as, err := domain.DecodeAssignment(kvs[0].Value)
	if err != nil {
		return as, errors.Wrapf(err, "job %s: assignment on node %s", a.JobID, node)
	}
	if as.JobID != a.JobID || as.Attempt != a.Attempt || as.Node != node {
		return as, errors.Newf("job %s: the assignment on node %s is of job %s attempt %d on %s", a.JobID, node, as.JobID, as.Attempt, as.Node)
	}
	return as, nil
}

// tracePull records the gang's pull phase as a span of the job's trace,
// from the reservation to the last node's pulled.
func (s *service) tracePull(ctx context.Context, a domain.Allocation) {
	sum := a.Pull.Summary(a.ReservedAt)
	if sum == nil {
		return
	}
	if job := telemetry.SpanContextOf(a.TraceParent); job.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, job)
	}
	_, span := s.Tel.Tracer.Start(ctx, telemetry.SpanPull, trace.WithTimestamp(a.ReservedAt), trace.WithAttributes(
		telemetry.AttrJobID.String(a.JobID), telemetry.AttrAttempt.Int(a.Attempt),
		attribute.String("lockstep.image", a.Pull.Image), attribute.String("lockstep.pull.slowest", sum.Slowest),
		attribute.Int64("lockstep.pull.slowest_ms", sum.SlowestTook.Milliseconds()), attribute.Int64("lockstep.image.bytes", sum.Bytes)))
	span.End(trace.WithTimestamp(a.Pull.DoneAt))
}

// failPull fails the attempt of a gang whose pull failed and releases it
// (a being read at rev; 0: not read); a job being drained is left to
// the drain.
func (s *service) failPull(ctx context.Context, a domain.Allocation, rev int64, reason string) error {
	s.Log.InfoContext(ctx, "image pull failed; attempt fails", "job", a.JobID, "attempt", a.Attempt, "reason", reason)
	_, err := s.finish(ctx, a, rev, domain.StateFailed, events.Failed, reason, nil, true)
	return err
}
