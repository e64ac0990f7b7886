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
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// launchTimeout releases a gang that did not start in time and requeues it.
func (s *service) launchTimeout(ctx context.Context, a domain.Allocation) {
	reason := fmt.Sprintf("LaunchTimeout: not every rank was running %s after reservation", s.cfg.LaunchTimeout)
	if a.Pull != nil {
		// A container gang's launch timeout starts after its pull.
		reason = fmt.Sprintf("LaunchTimeout: not every rank was running %s after every node had image %s", s.cfg.LaunchTimeout, a.Pull.Image)
	}
	if err := s.requeue(ctx, a, reason); err != nil {
		s.Log.Warn("launch timeout not handled; reconciler will retry", "job", a.JobID, "err", err)
	}
}

// nodeDown handles a node whose liveness key vanished: announce it, then
// take down every gang with a rank there.
func (s *service) nodeDown(ctx context.Context, n domain.Node) {
	ev := events.Event{Type: events.NodeDown, Node: n.Name, Epoch: n.Epoch, Time: s.cfg.Now().UTC(),
		Reason: "agent lease expired or agent stopped"}
	s.Tel.Metrics.NodeTransitions.Add(ctx, 1, metric.WithAttributes(telemetry.LabelEvent.String("down")))
	if err := s.Bus.PublishEvent(ctx, ev); err != nil {
		s.Log.Warn("node-down event not published", "node", n.Name, "err", err)
	}
	l, err := s.allocations(ctx, false)
	if err != nil {
		s.Log.Warn("node-down scan failed; reconciler will retry", "node", n.Name, "err", err)
		return
	}
	for _, rq := range lifecycle.NodeLost(l.allocs, n.Name, n.Epoch) {
		if err := s.requeue(ctx, rq.Alloc, rq.Reason); err != nil {
			s.Log.Warn("requeue after node loss failed; reconciler will retry", "job", rq.Alloc.JobID, "err", err)
		}
	}
}

// listing is etcd's allocations, and optionally the keys that belong to
// them, all at one revision.
type listing struct {
	rev       int64
	allocs    []domain.Allocation
	malformed map[string]error // by job: alloc/<job> values that cannot be used
	claims    []domain.Claim   // the values of the claims and port claims
	assigns   []lifecycle.AssignKey
}

// allocations lists every allocation (with keys, the claims, port claims
// and assignment keys too, at the same revision). Allocations remembered
// for the report path that the listing no longer holds are forgotten.
func (s *service) allocations(ctx context.Context, keys bool) (listing, error) {
	resp, err := s.Etcd.Get(ctx, store.AllocPrefix, clientv3.WithPrefix())
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
		resp, err := s.Etcd.Get(ctx, prefix, clientv3.WithPrefix(), at)
		if err != nil {
			return listing{}, err
		}
		for _, kv := range resp.Kvs {
			var c domain.Claim
			_ = codec.Decode(kv.Value, &c) // undecodable: JobID stays "", which StrayJobs skips
			l.claims = append(l.claims, c)
		}
	}
	assigns, err := s.Etcd.Get(ctx, store.AssignPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(), at)
	if err != nil {
		return listing{}, err
	}
	for _, kv := range assigns.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), store.AssignPrefix)
		if node, job, ok := strings.Cut(rest, "/"); ok {
			l.assigns = append(l.assigns, lifecycle.AssignKey{Node: node, Job: job})
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
