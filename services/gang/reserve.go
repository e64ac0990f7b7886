package gang

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/codec"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/errs"
	"github.com/lockstep-dev/lockstep/shared/events"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/telemetry"
)

// handleProposal reserves one proposal, all or nothing.
func (s *service) handleProposal(ctx context.Context, msg jetstream.Msg) error {
	var prop domain.Proposal
	if err := codec.Decode(msg.Data(), &prop); err != nil || len(prop.Placement.Nodes) == 0 {
		return errs.MarkPermanent(errors.Newf("malformed proposal: %v", err))
	}
	ctx = telemetry.WithJob(ctx, prop.JobID)
	job, rev, err := s.proposedJob(ctx, prop)
	if errs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if job.Attempt != prop.Attempt || (job.State != domain.StatePending && !job.State.Active()) {
		return nil // stale: the job moved on
	}
	trace.SpanFromContext(ctx).SetAttributes(append(telemetry.JobAttrs(job), telemetry.PlacementAttrs(prop.Placement)...)...)
	alloc, conflicts, err := s.reserve(ctx, job, prop)
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		// Redelivered after our own commit? Then finish what we started.
		if existing, _, found, err := store.GetAllocation(ctx, s.etcd, prop.JobID); err != nil {
			return err
		} else if found && existing.Attempt == prop.Attempt {
			return s.afterReserve(ctx, job, rev, existing, prop.Note)
		}
		if job.State != domain.StatePending {
			return nil
		}
		return s.conflict(ctx, job, rev, conflicts)
	}
	return s.afterReserve(ctx, job, rev, alloc, prop.Note)
}

// proposedJob is the job record the proposal was made on, or a fresh read
// when the proposal does not carry it.
func (s *service) proposedJob(ctx context.Context, prop domain.Proposal) (domain.Job, uint64, error) {
	if prop.Job != nil && prop.JobRevision > 0 && prop.Job.ID == prop.JobID {
		return *prop.Job, prop.JobRevision, nil
	}
	return s.jobs.Get(ctx, prop.JobID)
}

// reserve runs the all-or-nothing transaction. It returns the allocation on
// success, or the names of the slots that were taken.
func (s *service) reserve(ctx context.Context, job domain.Job, prop domain.Proposal) (_ domain.Allocation, conflicts []string, err error) {
	ctx, span := s.tel.Tracer.Start(ctx, telemetry.SpanReserve)
	defer func() {
		span.SetAttributes(telemetry.AttrConflicts.Int(len(conflicts)))
		telemetry.End(span, err)
	}()
	p := prop.Placement
	// Read each node's registration: the transaction pins its revision, so a
	// node that re-registered (new epoch) in between fails the compare.
	epochs := map[string]int64{}
	revs := map[string]int64{}
	for _, np := range p.Nodes {
		// The watch cache is nearly always current; when it is not, the
		// compare fails and the job is simply proposed again.
		n, rev, found := s.nodes.GetRev(store.NodeKey(np.Node))
		if !found {
			var err error
			if found, rev, err = store.GetJSON(ctx, s.etcd, store.NodeKey(np.Node), &n); err != nil {
				return domain.Allocation{}, nil, err
			}
		}
		if !found {
			return domain.Allocation{}, []string{np.Node + " (down)"}, nil
		}
		epochs[np.Node], revs[np.Node] = n.Epoch, rev
	}
	now := s.cfg.Now().UTC()
	lease := s.lease()
	// Agents continue the job's trace from the allocation's assignments.
	alloc := domain.Allocation{
		JobID: job.ID, Attempt: prop.Attempt, State: domain.AllocReserved, Placement: p,
		Lease: int64(lease), ReservedAt: now, LaunchDeadline: now.Add(s.cfg.LaunchTimeout),
		NodeEpochs: epochs, TraceParent: telemetry.TraceParent(ctx),
	}
	start := time.Now()
	ok, resp, err := store.Reserve(ctx, s.etcd, alloc, assignments(job, alloc), revs, lease)
	result := map[bool]string{true: "reserved", false: "conflict"}[ok]
	if err != nil {
		result = "error"
	}
	s.tel.Metrics.ReservationTxn.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(telemetry.LabelResult.String(result)))
	if err != nil {
		return domain.Allocation{}, nil, err
	}
	if !ok {
		return domain.Allocation{}, namedConflicts(resp, p, job.ID), nil
	}
	// The agents' reports start from this, without reading it back.
	s.remember(alloc, resp.Header.Revision)
	return alloc, nil, nil
}

// namedConflicts turns the failed branch's reads into "node-3/gpu2 held by
// job-x" strings, sorted.
func namedConflicts(resp *clientv3.TxnResponse, p domain.Placement, jobID string) []string {
	var out []string
	for _, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().Kvs {
			key := string(kv.Key)
			var c domain.Claim
			_ = codec.Decode(kv.Value, &c)
			switch {
			case strings.HasPrefix(key, store.ClaimsPrefix):
				node, gpu, _ := store.ParseClaimKey(key)
				out = append(out, fmt.Sprintf("%s/gpu%d held by %s", node, gpu, c.JobID))
			case strings.HasPrefix(key, store.PortsPrefix):
				addr, port, _ := store.ParsePortKey(key)
				out = append(out, fmt.Sprintf("port %s:%d held by %s", addr, port, c.JobID))
			case key == store.AllocKey(jobID):
				out = append(out, "job already holds an allocation")
			}
		}
	}
	// A node key that is present passed unless it changed; absent ones are
	// down. Report nodes re-registered or gone when nothing else explains it.
	if len(out) == 0 {
		out = append(out, "a node of "+strings.Join(p.NodeNames(), ",")+" re-registered or went down")
	}
	sort.Strings(out)
	return out
}

// assignments builds each node's part of the gang.
func assignments(job domain.Job, a domain.Allocation) []domain.Assignment {
	p := a.Placement
	out := make([]domain.Assignment, 0, len(p.Nodes))
	for _, np := range p.Nodes {
		out = append(out, domain.Assignment{
			JobID: job.ID, Attempt: a.Attempt, Epoch: a.NodeEpochs[np.Node], Node: np.Node,
			NodeRank: np.NodeRank, NNodes: len(p.Nodes), WorldSize: p.WorldSize(),
			MasterAddr: p.MasterAddr, MasterPort: p.MasterPort, Ranks: np.Ranks,
			Command: job.Spec.Command, Env: job.Spec.Env,
			RestartCount: a.Attempt - 1, Resume: job.LastCheckpoint, CheckpointDir: job.Spec.Checkpoint.Dir,
			Workdir: job.Spec.Workdir, TraceParent: a.TraceParent,
		})
	}
	return out
}

// afterReserve records the reservation on the job and announces it. It is
// safe to repeat.
//
// The event and the record update both follow the etcd commit and do not
// depend on each other, so they travel together: this is the hot path of
// every reservation. (If the job was cancelled meanwhile, "reserved" was
// still true when published; the release follows.)
func (s *service) afterReserve(ctx context.Context, job domain.Job, rev uint64, a domain.Allocation, note string) error {
	ev := events.ForJob(events.Reserved, job, a.ReservedAt)
	ev.Attempt, ev.Placement, ev.Reason = a.Attempt, &a.Placement, note
	announced := s.bus.PublishEventAsync(ctx, ev)
	updated, rev, changed, err := s.jobs.UpdateFrom(ctx, job, rev, func(j *domain.Job) (bool, error) {
		return j.Reserve(a.Attempt, a.Placement, a.ReservedAt), nil
	})
	if err != nil {
		return errors.CombineErrors(err, announced())
	}
	s.rememberJob(updated, rev)
	if changed {
		s.tel.Metrics.JobReserved(ctx, updated)
	}
	if updated.Attempt != a.Attempt || !updated.State.Active() {
		// Cancelled or requeued while we reserved: give the GPUs back.
		s.forget(job.ID)
		return errors.CombineErrors(store.ReleaseJob(ctx, s.etcd, job.ID, a.Attempt), announced())
	}
	return announced()
}

// conflict sends the job back to placement with the slots named.
func (s *service) conflict(ctx context.Context, job domain.Job, rev uint64, conflicts []string) error {
	s.log.InfoContext(ctx, "reservation conflict", "job", job.ID, "attempt", job.Attempt, "conflicts", conflicts)
	trace.SpanFromContext(ctx).SetAttributes(telemetry.AttrConflicts.Int(len(conflicts)))
	reason := strings.Join(conflicts, "; ")
	updated, changed, err := s.jobs.UpdateAt(ctx, job, rev, func(j *domain.Job) (bool, error) {
		return j.Conflict(job.Attempt, reason), nil
	})
	if err != nil || !changed {
		return err
	}
	s.tel.Metrics.Conflicts.Add(ctx, 1)
	ev := events.ForJob(events.Conflict, updated, s.cfg.Now())
	ev.Reason, ev.Conflicts = reason, conflicts
	return s.bus.PublishEvent(ctx, ev)
}
