package gang

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// handleProposal reserves one proposal, all or nothing. A proposal only
// names a job, an attempt and a placement: the job's record (from the
// watch, or the KV when the watch holds nothing as new as the proposal)
// decides what runs, and the placement must be one that record asks for.
// Anything else is refused: terminated, counted and logged, never retried.
func (s *service) handleProposal(ctx context.Context, msg jetstream.Msg) error {
	prop, err := domain.DecodeProposal(msg.Data())
	if err != nil {
		return s.refuse(ctx, prop, refusedMalformed, err.Error())
	}
	ctx = telemetry.WithJob(ctx, prop.JobID)
	job, rev, err := s.jobRecord(ctx, prop)
	switch {
	case errs.IsNotFound(err) && mayBeStaleRead(prop, deliveries(msg), s.cfg.Now()):
		// Not refused yet: retried after bus.RetryDelay.
		return errors.Newf("job %s: no record here yet of the revision %d placement proposed from; reading again", prop.JobID, prop.JobRevision)
	case errs.IsNotFound(err):
		return s.refuse(ctx, prop, refusedNoJob, "no such job")
	case err != nil:
		return err
	case job.ID != prop.JobID:
		return s.refuse(ctx, prop, refusedNoJob, fmt.Sprintf("the record under the job's key is job %q", job.ID))
	case job.Attempt < prop.Attempt && mayBeStaleRead(prop, deliveries(msg), s.cfg.Now()):
		// Placement proposed from a later attempt than this read shows:
		// the read lags (a requeue just written). Refused, the job would
		// wait for the proposal timeout and then the work stream's
		// de-duplication of the same proposal ID.
		return errors.Newf("job %s: read on attempt %d, proposed for attempt %d; reading again", prop.JobID, job.Attempt, prop.Attempt)
	case job.Attempt != prop.Attempt || job.State.Terminal():
		return s.refuse(ctx, prop, refusedNotPending, fmt.Sprintf("job is %s on attempt %d", job.State, job.Attempt))
	case job.State.Active():
		return s.reservedAlready(ctx, job, rev, prop)
	}
	nodes, err := s.nodeViews(ctx, prop.Placement)
	if err != nil {
		return err
	}
	switch st := checkFit(job.Spec, prop.Placement, nodes); st.code {
	case unfit:
		return s.refuse(ctx, prop, refusedUnfit, st.reason)
	case unavailable:
		// Likely a node that went away after placement decided: propose
		// again now rather than at the proposal timeout.
		if err := s.conflict(ctx, job, rev, []string{st.reason}); err != nil {
			return err
		}
		return s.refuse(ctx, prop, refusedUnavailable, st.reason)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(append(telemetry.JobAttrs(job), telemetry.PlacementAttrs(prop.Placement)...)...)
	}
	alloc, refused, err := s.reserve(ctx, job, prop, nodes)
	if err != nil {
		return err
	}
	if refused == nil {
		return s.afterReserve(ctx, job, rev, alloc, prop.Note)
	}
	existing, _, found, err := store.GetAllocation(ctx, s.Etcd, prop.JobID)
	retry := false
	switch {
	case store.IsMalformed(err):
		if err := s.dropMalformed(ctx, prop.JobID, err); err != nil {
			return err
		}
	case err != nil:
		return err
	case found && existing.Attempt == prop.Attempt:
		// Redelivered after our own commit: finish what we started.
		return s.afterReserve(ctx, job, rev, existing, prop.Note)
	case found && existing.Attempt < prop.Attempt:
		// The record says the job is pending on a later attempt, so the
		// earlier one is over: release it (its agents stop its ranks)
		// before this attempt can start. What refused this attempt was
		// likely that allocation's own hold (a requeue races its release),
		// so try once more rather than send placement round again: the
		// retry reserves, or waits for the old ranks' running keys.
		if err := s.releaseAttempt(ctx, job.ID, existing.Attempt); err != nil {
			return err
		}
		retry = true
	case !found && refused.own:
		// The job's own earlier hold refused it, and someone (the
		// reconciler, drain) released it since: the same retry.
		retry = true
	}
	if retry {
		if alloc, refused, err = s.reserve(ctx, job, prop, nodes); err != nil {
			return err
		}
		if refused == nil {
			return s.afterReserve(ctx, job, rev, alloc, prop.Note)
		}
	}
	if next(*refused) == waitForRanks {
		return s.awaitRanks(ctx, job, rev, *refused)
	}
	return s.conflict(ctx, job, rev, refused.conflicts)
}

// jobRecord is the proposal's job as recorded: the watch's copy when it is
// at least as new as the record placement decided on and on the same
// attempt (no KV read on the hot path), else a KV read — so a watch that
// lags never gets a proposal refused.
func (s *service) jobRecord(ctx context.Context, prop domain.Proposal) (domain.Job, uint64, error) {
	if j, rev, ok := s.records.Pending(prop.JobID); ok && rev >= prop.JobRevision && j.Attempt == prop.Attempt {
		return j, rev, nil
	}
	return s.Jobs.Get(ctx, prop.JobID)
}

// reservedAlready answers a proposal for an attempt the record says is
// reserved or running: a redelivery of a proposal this service committed
// is finished (idempotently) from the allocation etcd holds; anything else
// is refused.
func (s *service) reservedAlready(ctx context.Context, job domain.Job, rev uint64, prop domain.Proposal) error {
	existing, _, found, err := store.GetAllocation(ctx, s.Etcd, job.ID)
	switch {
	case store.IsMalformed(err):
		return s.dropMalformed(ctx, job.ID, err)
	case err != nil:
		return err
	case found && existing.Attempt == prop.Attempt:
		return s.afterReserve(ctx, job, rev, existing, prop.Note)
	}
	return s.refuse(ctx, prop, refusedNotPending, fmt.Sprintf("job is %s on attempt %d", job.State, job.Attempt))
}

// nodeViews gathers what the fit check and the reservation need about
// each node of a placement: its registration from the watch cache (or
// etcd when the cache has none yet), else its inventory record (known,
// but down), and whether an operator drained it.
func (s *service) nodeViews(ctx context.Context, p domain.Placement) (map[string]nodeView, error) {
	out := make(map[string]nodeView, len(p.Nodes))
	for _, np := range p.Nodes {
		if _, seen := out[np.Node]; seen || !subjects.Token(np.Node) {
			continue // the fit check names it
		}
		var v nodeView
		st, _ := s.nodeStates.Get(store.NodeStateKey(np.Node))
		v.Drained = st.Drained
		// The watch cache is nearly always current; when it is not, the
		// reservation's compare fails and the job is proposed again.
		n, rev, found := s.nodes.GetRev(store.NodeKey(np.Node))
		if !found {
			// Read with the cache's own checks (DecodeNode, the name its
			// key gives): checkFit and the reservation trust the
			// registration's GPUs, address, withdrawn GPUs and epoch.
			var err error
			if n, rev, found, err = store.GetNode(ctx, s.Etcd, np.Node); err != nil {
				if found {
					s.refusedRecord(np.Node, store.NodeKey(np.Node), err)
					continue // a registration that fails its checks is no node
				}
				return nil, err
			}
		}
		if found {
			v.Reg, v.Rev, v.Up = n, rev, true
			out[np.Node] = v
			continue
		}
		inv, _, known, err := store.GetInventory(ctx, s.Etcd, np.Node)
		switch {
		case err != nil && known:
			s.refusedRecord(np.Node, store.InventoryKey(np.Node), err)
		case err != nil:
			return nil, err
		case known:
			v.Reg = inv
			out[np.Node] = v
		}
	}
	return out, nil
}

// refusedRecord logs a node record that fails the checks the node caches
// make: nodeViews takes it for no node, so the fit check refuses the
// proposal as naming an unregistered one, and this says why.
func (s *service) refusedRecord(node, key string, err error) {
	s.Log.Warn("node record fails its checks; taken for no node", "node", node, "key", key, "err", err)
}

// reserveTries bounds the reservation transactions one proposal sends
// when etcd members do not answer: one per member of a 3-member cluster.
const reserveTries = 3

// reserve runs the all-or-nothing transaction. It returns the allocation on
// success, or what stood in the way (non-nil).
func (s *service) reserve(ctx context.Context, job domain.Job, prop domain.Proposal, nodes map[string]nodeView) (_ domain.Allocation, refused *refusal, err error) {
	ctx, span := s.Tel.Tracer.Start(ctx, telemetry.SpanReserve)
	defer func() {
		n := 0
		if refused != nil {
			n = len(refused.conflicts)
		}
		span.SetAttributes(telemetry.AttrConflicts.Int(n))
		telemetry.End(span, err)
	}()
	p := prop.Placement
	// The transaction pins each node's registration revision, so a node that
	// re-registered (new epoch) since it was read fails the compare.
	epochs := map[string]int64{}
	revs := map[string]int64{}
	for _, np := range p.Nodes {
		epochs[np.Node], revs[np.Node] = nodes[np.Node].Reg.Epoch, nodes[np.Node].Rev
	}
	now := s.cfg.Now().UTC()
	// Agents continue the job's trace from the allocation's assignments.
	alloc := domain.Allocation{
		JobID: job.ID, Attempt: prop.Attempt, State: domain.AllocReserved, Placement: p,
		ReservedAt: now, LaunchDeadline: now.Add(s.cfg.LaunchTimeout),
		NodeEpochs: epochs, TraceParent: telemetry.TraceParent(ctx),
		Batch: job.Spec.Batch != nil, Pull: pullPhaseOf(job.Spec, now),
		WholeNodes: wholeNodes(p, nodes),
	}
	if alloc.Pull != nil {
		// The launch timeout starts after the pull (pull.go sets it anew
		// then); until then the pull deadline applies.
		alloc.LaunchDeadline = alloc.Pull.Deadline.Add(s.cfg.LaunchTimeout)
	}
	lease, err := s.leases.Lend(ctx, borrower(alloc), alloc.LaunchDeadline)
	if err != nil {
		return domain.Allocation{}, nil, err
	}
	alloc.Lease = int64(lease)
	start := time.Now()
	assigns := assignments(job, alloc)
	var ok, unanswered bool
	var resp *clientv3.TxnResponse
	for try := 1; ; try++ {
		ok, resp, err = store.Reserve(ctx, s.txns, alloc, assigns, revs, lease)
		// A try given up on (this context ended) may still commit, as
		// may one nobody answered: neither gives the lease back.
		unanswered = unanswered || store.Unanswered(err) || (err != nil && ctx.Err() != nil)
		// A member that did not answer (frozen) is left for the next one
		// at once rather than after a redelivery. Repeating is safe: an
		// attempt that did commit fails this one's compares on the job's
		// own allocation, which handleProposal then finishes.
		if !store.Unanswered(err) || try == reserveTries || ctx.Err() != nil {
			break
		}
		s.Log.WarnContext(ctx, "reservation not answered; trying the next etcd member", "job", job.ID, "try", try, "err", err)
		store.AwaitMemberCheck(ctx, s.Etcd)
	}
	if !ok && !unanswered {
		// Nothing of it on the lease (or, on an error, maybe a little). A
		// try nobody answered may have committed, and the next one then
		// fails on its own allocation: that reservation is on the lease,
		// which the pool takes back at its deadline.
		s.leases.Return(lease, borrower(alloc))
	}
	result := map[bool]string{true: "reserved", false: "conflict"}[ok]
	if err != nil {
		result = "error"
	}
	s.Tel.Metrics.ReservationTxn.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(telemetry.LabelResult.String(result)))
	if err != nil {
		return domain.Allocation{}, nil, err
	}
	if !ok {
		var kvs []*mvccpb.KeyValue
		for _, r := range resp.Responses {
			kvs = append(kvs, r.GetResponseRange().Kvs...)
		}
		r := readRefusal(kvs, p, job.ID)
		r.rev = resp.Header.Revision
		return domain.Allocation{}, &r, nil
	}
	// The agents' reports start from this, without reading it back.
	s.remember(alloc, resp.Header.Revision)
	return alloc, nil, nil
}

// wholeNodes lists the nodes of p whose every GPU, by their registrations
// (pinned by the reservation's compare on each node key), p takes: those
// are claimed by one key each (store.ClaimKeys).
func wholeNodes(p domain.Placement, nodes map[string]nodeView) []string {
	var out []string
	for _, np := range p.Nodes {
		if coversAll(np.GPUs, nodes[np.Node].Reg.GPUs) {
			out = append(out, np.Node)
		}
	}
	return out
}

// coversAll reports whether gpus are exactly the indexes 0..n-1 of a node
// of n GPUs, each once.
func coversAll(gpus []int, n int) bool {
	if n < 1 || len(gpus) != n {
		return false
	}
	seen := make([]bool, n)
	for _, g := range gpus {
		if g < 0 || g >= n || seen[g] {
			return false
		}
		seen[g] = true
	}
	return true
}

// assignments builds each node's part of the gang.
func assignments(job domain.Job, a domain.Allocation) []domain.Assignment {
	p := a.Placement
	out := make([]domain.Assignment, 0, len(p.Nodes))
	nodes := make([]string, len(p.Nodes))
	for _, np := range p.Nodes {
		if np.NodeRank >= 0 && np.NodeRank < len(nodes) {
			nodes[np.NodeRank] = np.Node
		}
	}
	spec := job.Spec.WithDefaults()
	for _, np := range p.Nodes {
		out = append(out, domain.Assignment{
			JobID: job.ID, Attempt: a.Attempt, Epoch: a.NodeEpochs[np.Node], Node: np.Node,
			NodeRank: np.NodeRank, NNodes: len(p.Nodes), WorldSize: p.WorldSize(),
			MasterAddr: p.MasterAddr, MasterPort: p.MasterPort, Ranks: np.Ranks,
			Command: job.Spec.Command, Env: job.Spec.Env,
			RestartCount: a.Attempt - 1, Resume: job.LastCheckpoint, CheckpointDir: job.Spec.Checkpoint.Dir,
			Workdir: job.Spec.Workdir, TraceParent: a.TraceParent, Owner: job.Owner,
			GPUBind: job.Spec.Gang.GPUBind, Array: job.Array,
			JobName: spec.Name, Queue: spec.Queue, Nodes: nodes, CPUsPerTask: spec.Gang.CPUsPerTask,
			Batch: job.Spec.Batch, Container: spec.Container, PullOnly: a.Pull != nil,
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
	announced := s.Bus.PublishEventAsync(ctx, ev)
	updated, rev, changed, err := s.Jobs.UpdateFrom(ctx, job, rev, func(j *domain.Job) (bool, error) {
		return j.Reserve(a.Attempt, a.Placement, a.ReservedAt), nil
	})
	if err != nil {
		return errors.CombineErrors(err, announced())
	}
	s.rememberJob(updated, rev)
	if changed {
		s.Tel.Metrics.JobReserved(ctx, updated)
	}
	if updated.Attempt != a.Attempt || !updated.State.Active() {
		// Cancelled or requeued while we reserved: give the GPUs back.
		s.forget(job.ID)
		return errors.CombineErrors(s.releaseJob(ctx, job.ID, a.Attempt), announced())
	}
	return announced()
}

// conflict sends the job back to placement with the slots named.
func (s *service) conflict(ctx context.Context, job domain.Job, rev uint64, conflicts []string) error {
	s.Log.InfoContext(ctx, "reservation conflict", "job", job.ID, "attempt", job.Attempt, "conflicts", conflicts)
	trace.SpanFromContext(ctx).SetAttributes(telemetry.AttrConflicts.Int(len(conflicts)))
	reason := strings.Join(conflicts, "; ")
	updated, changed, err := s.Jobs.UpdateAt(ctx, job, rev, func(j *domain.Job) (bool, error) {
		return j.Conflict(job.Attempt, reason), nil
	})
	if err != nil || !changed {
		return err
	}
	s.Tel.Metrics.Conflicts.Add(ctx, 1)
	ev := events.ForJob(events.Conflict, updated, s.cfg.Now())
	ev.Reason, ev.Conflicts = reason, conflicts
	return s.Bus.PublishEvent(ctx, ev)
}

// borrower names a reservation to the lease pool: the lease lent to it is
// given back only in its name (store.LeasePool.Return).
func borrower(a domain.Allocation) string {
	return a.JobID + "#" + strconv.Itoa(a.Attempt)
}
