package gang

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// launchTimeout releases a gang that did not start in time and requeues it.
func (s *service) launchTimeout(ctx context.Context, a domain.Allocation) {
	reason := fmt.Sprintf("LaunchTimeout: not every rank was running %s after reservation", s.cfg.LaunchTimeout)
	if err := s.requeue(ctx, a, reason); err != nil {
		s.log.Warn("launch timeout not handled; reconciler will retry", "job", a.JobID, "err", err)
	}
}

// nodeDown handles a node whose liveness key vanished: announce it, then
// take down every gang with a rank there.
func (s *service) nodeDown(ctx context.Context, n domain.Node) {
	ev := events.Event{Type: events.NodeDown, Node: n.Name, Epoch: n.Epoch, Time: s.cfg.Now().UTC(),
		Reason: "agent lease expired or agent stopped"}
	s.tel.Metrics.NodeTransitions.Add(ctx, 1, metric.WithAttributes(telemetry.LabelEvent.String("down")))
	if err := s.bus.PublishEvent(ctx, ev); err != nil {
		s.log.Warn("node-down event not published", "node", n.Name, "err", err)
	}
	l, err := s.allocations(ctx, false)
	if err != nil {
		s.log.Warn("node-down scan failed; reconciler will retry", "node", n.Name, "err", err)
		return
	}
	for _, a := range l.allocs {
		if onNode(a, n.Name) {
			if err := s.requeue(ctx, a, "node "+n.Name+" lost"); err != nil {
				s.log.Warn("requeue after node loss failed; reconciler will retry", "job", a.JobID, "err", err)
			}
		}
	}
}

func onNode(a domain.Allocation, node string) bool {
	for _, np := range a.Placement.Nodes {
		if np.Node == node {
			return true
		}
	}
	return false
}

// listing is etcd's allocations, and optionally the keys that belong to
// them, all at one revision.
type listing struct {
	rev       int64
	allocs    []domain.Allocation
	malformed map[string]error // by job: alloc/<job> values that cannot be used
	claims    []store.Owned    // claims and port claims, with the job their value names
	assigns   []assignRef
}

// allocations lists every allocation (with keys, the claims, port claims
// and assignment keys too, at the same revision). Allocations remembered
// for the report path that the listing no longer holds are forgotten.
func (s *service) allocations(ctx context.Context, keys bool) (listing, error) {
	resp, err := s.etcd.Get(ctx, store.AllocPrefix, clientv3.WithPrefix())
	if err != nil {
		return listing{}, err
	}
	l := listing{rev: resp.Header.Revision, allocs: make([]domain.Allocation, 0, len(resp.Kvs)), malformed: map[string]error{}}
	live := make(map[string]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		a, err := store.DecodeAllocation(string(kv.Key), kv.Value)
		if err != nil {
			l.malformed[store.LastSegment(string(kv.Key))] = err
			continue
		}
		l.allocs = append(l.allocs, a)
		live[a.JobID] = true
	}
	s.forgetAllBut(live, resp.Header.Revision)
	if !keys {
		return l, nil
	}
	at := clientv3.WithRev(l.rev)
	for _, prefix := range []string{store.ClaimsPrefix, store.PortsPrefix} {
		resp, err := s.etcd.Get(ctx, prefix, clientv3.WithPrefix(), at)
		if err != nil {
			return listing{}, err
		}
		for _, kv := range resp.Kvs {
			var c domain.Claim
			_ = codec.Decode(kv.Value, &c)
			l.claims = append(l.claims, store.Owned{StoredKey: store.StoredKey{Key: string(kv.Key), ModRev: kv.ModRevision}, Job: c.JobID, Attempt: c.Attempt})
		}
	}
	assigns, err := s.etcd.Get(ctx, store.AssignPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(), at)
	if err != nil {
		return listing{}, err
	}
	for _, kv := range assigns.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), store.AssignPrefix)
		if node, job, ok := strings.Cut(rest, "/"); ok {
			l.assigns = append(l.assigns, assignRef{Node: node, Job: job})
		}
	}
	return l, nil
}

func (s *service) reconcileLoop(ctx context.Context) {
	select {
	case <-s.records.Ready():
	case <-ctx.Done():
		return
	}
	t := time.NewTicker(s.cfg.ReconcileInterval)
	defer t.Stop()
	for {
		s.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reconcile compares etcd with the job records and repairs what a crash or
// a missed watch event left behind:
//   - an allocation whose job is finished, gone, or on another attempt is
//     released (one whose attempt is still pending is a reservation being
//     recorded, and is left alone until its launch deadline);
//   - an allocation past its launch deadline is released and requeued;
//   - an allocation on a node that is down is requeued;
//   - an active job without its allocation is requeued;
//   - the footprint of a finished or unknown job is deleted.
func (s *service) reconcile(ctx context.Context) {
	l, err := s.allocations(ctx, true)
	if err != nil {
		s.log.Warn("reconcile: list allocations", "err", err)
		return
	}
	allocs := l.allocs
	nodes, err := s.etcd.Get(ctx, store.NodesPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		s.log.Warn("reconcile: list nodes", "err", err)
		return
	}
	up := map[string]bool{}
	for _, kv := range nodes.Kvs {
		up[store.LastSegment(string(kv.Key))] = true
	}
	// The unfinished records as the watch has them, taken after the
	// allocations were listed (as a read per allocation would be).
	active := s.records.Snapshot()
	now := s.cfg.Now()
	held := map[string]int{}
	for _, a := range allocs {
		held[a.JobID] = a.Attempt
		job, found := active[a.JobID]
		if !found || job.Attempt != a.Attempt {
			// Finished, or the watch lags the bucket. Releasing is final,
			// so confirm with a read of the record.
			full, _, err := s.jobs.Get(ctx, a.JobID)
			if err != nil && !errs.IsNotFound(err) {
				s.log.Warn("reconcile: read job", "job", a.JobID, "err", err)
				continue
			}
			job, found = jobs.BriefOf(full), err == nil
		}
		switch {
		case !found || job.State.Terminal() || job.Attempt != a.Attempt:
			s.forget(a.JobID)
			if err := s.releaseJob(ctx, a.JobID, a.Attempt); err != nil {
				s.log.Warn("reconcile: release orphan", "job", a.JobID, "err", err)
			}
		case a.State == domain.AllocReserved && now.After(a.LaunchDeadline):
			s.launchTimeout(ctx, a)
		case job.State == domain.StatePending:
			// The same attempt, still pending: a replica committed the
			// reservation and is about to record it on the job (or crashed
			// in between: the redelivered proposal finishes it, its lease
			// or the launch deadline ends it). Releasing it here would
			// kill a gang that is starting.
		default:
			lost := false
			for _, np := range a.Placement.Nodes {
				if !up[np.Node] {
					_ = s.requeue(ctx, a, "node "+np.Node+" lost")
					lost = true
					break
				}
			}
			if !lost && job.State == domain.StateReserved && a.State == domain.AllocRunning {
				// Past the launch barrier but never recorded as running (a
				// crash between the two): record it now.
				if err := s.announceRunning(ctx, a); err != nil {
					s.log.Warn("reconcile: record running", "job", a.JobID, "err", err)
				}
			}
		}
	}
	for _, j := range active {
		if !j.State.Active() {
			continue
		}
		if att, ok := held[j.ID]; ok && att == j.Attempt {
			continue
		}
		// Re-read: the allocation may have been written since the listing.
		if a, _, found, err := store.GetAllocation(ctx, s.etcd, j.ID); err != nil || (found && a.Attempt == j.Attempt) {
			continue
		}
		reason := "reservation lost: its lease expired before every rank was running"
		if j.State == domain.StateRunning {
			// A running gang's keys outlive every lease: its record was
			// deleted by hand. requeue sweeps what the record named.
			reason = "allocation record of the running gang is gone; its claims and assignments were released"
		}
		if err := s.requeue(ctx, domain.Allocation{JobID: j.ID, Attempt: j.Attempt, TraceParent: j.TraceParent}, reason); err != nil {
			s.log.Warn("reconcile: requeue", "job", j.ID, "err", err)
		}
	}
	for job, why := range l.malformed {
		if err := s.dropMalformed(ctx, job, why); err != nil {
			s.log.Warn("reconcile: release malformed allocation", "job", job, "err", err)
		}
	}
	s.sweepStrays(ctx, l, active)
	s.dropFootprints(ctx, active)
}

// sweepStrays releases the keys that no allocation accounts for (see
// strayJobs), for the attempts the job's record says are over.
func (s *service) sweepStrays(ctx context.Context, l listing, active map[string]jobs.Brief) {
	byJob := make(map[string]domain.Allocation, len(l.allocs))
	for _, a := range l.allocs {
		byJob[a.JobID] = a
	}
	for _, id := range strayJobs(byJob, l.malformed, l.claims, l.assigns) {
		job, found := active[id]
		if !found {
			// Finished, or the watch lags: sweeping every attempt is
			// final, so confirm with a read of the record.
			full, _, err := s.jobs.Get(ctx, id)
			if err != nil && !errs.IsNotFound(err) {
				s.log.Warn("reconcile: read job", "job", id, "err", err)
				continue
			}
			job, found = jobs.BriefOf(full), err == nil
		}
		_, hasAlloc := byJob[id]
		upTo, ok := strayUpTo(job, found, hasAlloc)
		if !ok {
			continue // requeued above, which sweeps
		}
		n, err := store.SweepJob(ctx, s.etcd, id, upTo)
		if err != nil {
			s.log.Warn("reconcile: sweep stray keys", "job", id, "err", err)
			continue
		}
		if n > 0 {
			s.log.Warn("released keys no allocation accounted for", "job", id, "attempts_up_to", upTo, "keys", n)
		}
	}
}
