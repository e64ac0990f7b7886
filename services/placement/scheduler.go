package placement

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/bus"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/jobs"
	"github.com/lockstep-dev/lockstep/shared/placement"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/subjects"
)

// scheduler is the leader's loop: caches fed by etcd watches and the jobs
// KV watch, and a cycle that runs whenever any of them changes.
type scheduler struct {
	etcd *clientv3.Client
	bus  *bus.Bus
	jobs *jobs.Store
	cfg  Config
	log  *slog.Logger

	nodes     *store.Cache[domain.Node]
	inventory *store.Cache[domain.Node]
	claims    *store.Cache[domain.Claim]
	ports     *store.Cache[domain.Claim]

	kick chan struct{}

	mu      sync.Mutex
	pending map[string]domain.Job
	// revs holds the KV revision each pending record was seen at.
	revs map[string]uint64
	// inflight holds proposals not yet answered; their GPUs are treated as
	// taken so one cycle never offers a GPU twice.
	inflight map[string]proposal
}

type proposal struct {
	attempt   int
	conflicts int
	placement domain.Placement
	deadline  time.Time
}

func newScheduler(b *bus.Bus, cli *clientv3.Client, js *jobs.Store, cfg Config, log *slog.Logger) *scheduler {
	s := &scheduler{
		etcd: cli, bus: b, jobs: js, cfg: cfg, log: log,
		nodes:     store.NewCache[domain.Node](cli, store.NodesPrefix, log),
		inventory: store.NewCache[domain.Node](cli, store.InventoryPrefix, log),
		claims:    store.NewCache[domain.Claim](cli, store.ClaimsPrefix, log),
		ports:     store.NewCache[domain.Claim](cli, store.PortsPrefix, log),
		kick:      make(chan struct{}, 1),
		pending:   map[string]domain.Job{},
		revs:      map[string]uint64{},
		inflight:  map[string]proposal{},
	}
	kick := func(string, *domain.Node, *domain.Node) { s.poke() }
	s.nodes.OnChange = kick
	s.inventory.OnChange = kick
	s.claims.OnChange = func(string, *domain.Claim, *domain.Claim) { s.poke() }
	s.ports.OnChange = s.claims.OnChange
	return s
}

func (s *scheduler) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *scheduler) run(ctx context.Context) error {
	for _, c := range []interface{ Run(context.Context) }{s.nodes, s.inventory, s.claims, s.ports} {
		go c.Run(ctx)
	}
	for _, ready := range []<-chan struct{}{s.nodes.Ready(), s.inventory.Ready(), s.claims.Ready(), s.ports.Ready()} {
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	w, err := s.jobs.Watch(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	go s.followJobs(ctx, w)

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.kick:
		case <-tick.C:
		}
		s.cycle(ctx)
	}
}

// followJobs mirrors pending jobs from the KV watch.
func (s *scheduler) followJobs(ctx context.Context, w jetstream.KeyWatcher) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				continue // end of the initial replay
			}
			s.mu.Lock()
			if e.Operation() != jetstream.KeyValuePut {
				delete(s.pending, e.Key())
			} else if j, err := jobs.Decode(e.Value()); err != nil {
				s.log.Warn("undecodable job record", "job", e.Key(), "err", err)
			} else if j.State == domain.StatePending {
				s.pending[j.ID], s.revs[j.ID] = j, e.Revision()
			} else {
				delete(s.pending, j.ID)
			}
			s.mu.Unlock()
			s.poke()
		}
	}
}

// cycle runs one scheduling pass over the pending queue.
func (s *scheduler) cycle(ctx context.Context) {
	now := s.cfg.Now()
	store.CatchUp(ctx, s.etcd, 200*time.Millisecond, s.nodes, s.inventory, s.claims, s.ports)
	snap := s.snapshot()

	s.mu.Lock()
	queue := make([]domain.Job, 0, len(s.pending))
	for _, j := range s.pending {
		queue = append(queue, j)
	}
	// Forget answered or expired proposals; keep the rest as taken.
	for id, p := range s.inflight {
		j, ok := s.pending[id]
		if !ok || j.Attempt != p.attempt || j.Conflicts != p.conflicts || now.After(p.deadline) {
			delete(s.inflight, id)
			continue
		}
		snap.Take(p.placement)
	}
	s.mu.Unlock()

	sortQueue(queue)
	for _, j := range queue {
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		_, busy := s.inflight[j.ID]
		s.mu.Unlock()
		if busy {
			continue
		}
		res := placement.Place(snap, placement.RequestForJob(j), now, seedFor(j))
		switch res.Code {
		case placement.Placed:
			s.propose(ctx, j, *res.Placement, now)
			snap.Take(*res.Placement)
		default:
			reason := res.Reason
			if res.Code == placement.Unschedulable {
				reason = fmt.Sprintf("%s: %s", domain.ReasonNoNodes, res.Reason)
			}
			s.explain(ctx, j, reason)
		}
	}
}

// sortQueue orders jobs by priority (high first), then submission time.
func sortQueue(q []domain.Job) {
	sort.Slice(q, func(a, b int) bool {
		if q[a].Spec.Priority != q[b].Spec.Priority {
			return q[a].Spec.Priority > q[b].Spec.Priority
		}
		if !q[a].SubmittedAt.Equal(q[b].SubmittedAt) {
			return q[a].SubmittedAt.Before(q[b].SubmittedAt)
		}
		return q[a].ID < q[b].ID
	})
}

func (s *scheduler) propose(ctx context.Context, j domain.Job, p domain.Placement, now time.Time) {
	s.mu.Lock()
	rev := s.revs[j.ID]
	s.mu.Unlock()
	prop := domain.Proposal{JobID: j.ID, Attempt: j.Attempt, Placement: p, ProposedAt: now, Job: &j, JobRevision: rev}
	msgID := fmt.Sprintf("propose.%s.%d.%d", j.ID, j.Attempt, j.Conflicts)
	if err := s.bus.PublishJSON(ctx, subjects.Reserve, msgID, prop); err != nil {
		s.log.Warn("proposal not sent", "job", j.ID, "err", err)
		return
	}
	s.mu.Lock()
	s.inflight[j.ID] = proposal{attempt: j.Attempt, conflicts: j.Conflicts, placement: p, deadline: now.Add(s.cfg.ProposalTimeout)}
	s.mu.Unlock()
}

// explain records why a job is still pending, when the reason changed.
func (s *scheduler) explain(ctx context.Context, j domain.Job, reason string) {
	if j.Reason == reason {
		return
	}
	updated, changed, err := s.jobs.Update(ctx, j.ID, func(cur *domain.Job) (bool, error) {
		return cur.SetPendingReason(j.Attempt, reason), nil
	})
	if err != nil {
		s.log.Warn("pending reason not recorded", "job", j.ID, "err", err)
		return
	}
	if changed {
		s.mu.Lock()
		s.pending[j.ID], s.revs[j.ID] = updated, 0 // the watch brings the new revision
		s.mu.Unlock()
	}
}

// snapshot builds placement's view: every inventoried node, up when its
// liveness key exists, with claimed GPUs removed.
func (s *scheduler) snapshot() *placement.Snapshot {
	live := s.nodes.Snapshot()
	inv := s.inventory.Snapshot()
	claims := s.claims.Snapshot()
	used := map[string]map[int]bool{}
	for key := range claims {
		if node, gpu, ok := store.ParseClaimKey(key); ok {
			if used[node] == nil {
				used[node] = map[int]bool{}
			}
			used[node][gpu] = true
		}
	}
	snap := &placement.Snapshot{
		UsedPorts: map[string]map[int]bool{},
		PortBase:  store.MasterPortBase, PortCount: store.MasterPortCount,
	}
	for key := range s.ports.Snapshot() {
		if addr, port, ok := store.ParsePortKey(key); ok {
			if snap.UsedPorts[addr] == nil {
				snap.UsedPorts[addr] = map[int]bool{}
			}
			snap.UsedPorts[addr][port] = true
		}
	}
	seen := map[string]bool{}
	add := func(n domain.Node, up bool) {
		if seen[n.Name] {
			return
		}
		seen[n.Name] = true
		var free []int
		for g := 0; g < n.GPUs; g++ {
			if !used[n.Name][g] {
				free = append(free, g)
			}
		}
		snap.Nodes = append(snap.Nodes, placement.NodeView{Node: n, Free: free, Up: up})
	}
	for _, n := range live {
		add(n, true)
	}
	for _, n := range inv {
		add(n, false)
	}
	snap.Sort()
	return snap
}

// seedFor derives a decision's seed from the job and attempt, so the same
// decision can be replayed (STYLE rule 17).
func seedFor(j domain.Job) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(j.ID))
	return h.Sum64() ^ uint64(j.Attempt)
}
