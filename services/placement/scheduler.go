package placement

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/depend"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// scheduler is the leader's loop: caches fed by etcd watches and the jobs
// KV watch, and a cycle that runs whenever any of them changes.
type scheduler struct {
	// Log, Tel, Bus, Etcd and Jobs, as config.Start made them.
	*config.Started
	cfg Config

	nodes     *store.Cache[domain.Node]
	inventory *store.Cache[domain.Node]
	allocs    *store.Cache[store.Holding]
	nodeState *store.Cache[domain.NodeState]

	// view is the cluster as the caches say, updated as they change.
	view *view

	kick chan struct{}

	mu sync.Mutex
	// active holds every pending, reserved or running job, with the KV
	// revision it was seen at. An entry is replaced, never changed: a
	// cycle's copy of the map (jobsSeen) shares them.
	active map[string]*seenJob
	// ended holds what dependencies need of every finished job whose
	// record the bucket still keeps; current says the job records'
	// replay is complete, so a job in neither map has no record. loaded
	// says a replay completed once: until then the mirror is partial, and
	// no cycle plans on it.
	ended   map[string]depend.Job
	current bool
	loaded  bool
	// usage holds the GPU use of running jobs, and finished holds that of
	// finished ones folded per queue (folded marks the jobs it holds), for
	// fair share.
	usage    map[string]queue.UsageRecord
	finished *queue.UsageLedger
	folded   map[string]bool
	// inflight holds proposals not yet answered; their GPUs are treated as
	// taken so one cycle never offers a GPU twice.
	inflight map[string]proposal
	// preempting holds, per preemptor, the victims asked to drain.
	preempting map[string]preemption
	// waits holds the pending jobs' topology wait clocks (switchwait.go).
	waits switchWaits
	// reasons paces the rewrites of pending reasons (reasons.go).
	reasons reasonWrites
}

type seenJob struct {
	job domain.Job
	rev uint64
}

// jobsSeen is the active jobs as a cycle saw them when it started. Its
// entries are the mirror's (active), shared, not copied: a cycle copies
// a pointer per job instead of a whole record.
type jobsSeen map[string]*seenJob

// get is the entry of job id, and whether the cycle saw the job; the zero
// entry when it did not.
func (m jobsSeen) get(id string) (seenJob, bool) {
	if sj, ok := m[id]; ok {
		return *sj, true
	}
	return seenJob{}, false
}

type proposal struct {
	attempt   int
	conflicts int
	placement domain.Placement
	deadline  time.Time
}

func newScheduler(st *config.Started, cfg Config) *scheduler {
	cli, log := st.Etcd, st.Log
	s := &scheduler{
		Started: st, cfg: cfg,
		nodes:      store.NodeCache(cli, log),
		inventory:  store.InventoryCache(cli, log),
		allocs:     store.HoldingsCache(cli, log),
		nodeState:  store.NodeStateCache(cli, log),
		view:       newView(),
		kick:       make(chan struct{}, 1),
		active:     map[string]*seenJob{},
		ended:      map[string]depend.Job{},
		usage:      map[string]queue.UsageRecord{},
		finished:   queue.NewUsageLedger(queue.DefaultHalfLife),
		folded:     map[string]bool{},
		inflight:   map[string]proposal{},
		preempting: map[string]preemption{},
	}
	pokeNode := func(string, *domain.Node, *domain.Node) { s.poke() }
	s.nodes.OnChange, s.inventory.OnChange = pokeNode, pokeNode
	s.allocs.OnChange = func(_ string, val, prev *store.Holding) {
		if val != nil && val.SamePlacement(prev) {
			// A start, an exit or the launch barrier: the gang holds what
			// it held. The view keeps only what gangs hold; a cycle reads
			// the rest (state, attempt) from the cache when it runs, and
			// the job-record write that follows the barrier pokes one.
			return
		}
		s.view.allocChanged(allocationOf(val), allocationOf(prev))
		s.poke()
	}
	s.nodeState.OnChange = func(string, *domain.NodeState, *domain.NodeState) { s.poke() }
	return s
}

// allocationOf is h's record, nil for none.
func allocationOf(h *store.Holding) *domain.Allocation {
	if h == nil {
		return nil
	}
	return &h.Allocation
}

func (s *scheduler) caches() []interface {
	Run(context.Context)
	Ready() <-chan struct{}
	Rev() int64
} {
	return []interface {
		Run(context.Context)
		Ready() <-chan struct{}
		Rev() int64
	}{s.nodes, s.inventory, s.allocs, s.nodeState}
}

func (s *scheduler) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *scheduler) run(ctx context.Context) error {
	for _, c := range s.caches() {
		go c.Run(ctx)
	}
	for _, c := range s.caches() {
		select {
		case <-c.Ready():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	go s.Jobs.Follow(ctx, s.Log, jobSink{s})
	defer s.Tel.ObserveQueues(s.queueDepths)()
	defer s.Tel.ObservePastSwitchWait(s.pastSwitchWait)()
	stopAdmin, err := s.serveAdmin(ctx)
	if err != nil {
		return err
	}
	defer stopAdmin()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.kick:
		case <-tick.C:
		}
		// Wall time paces the loop; no decision depends on it.
		start := time.Now()
		s.cycle(ctx)
		clock.Sleep(ctx, cycleRest(time.Since(start)))
	}
}

// cycleRest is how long the loop rests after a cycle that took d before it
// starts the next: at least minCycleRest, so that changes arriving
// together (a reservation's claims, a batch of job records) make one cycle
// and not one each, and at least as long as the cycle itself, so that
// under a constant stream of changes placement keeps to about half a core
// and leaves the rest to the services that carry its decisions out. Every
// cycle plans the whole backlog, so resting delays decisions but does not
// lose any; the rest is capped so that it never adds more than
// maxCycleRest.
func cycleRest(d time.Duration) time.Duration {
	return min(max(d, minCycleRest), maxCycleRest)
}

const (
	minCycleRest = 5 * time.Millisecond
	maxCycleRest = 50 * time.Millisecond
)

// pastSwitchWait counts pending gangs past their topology wait, by queue,
// for the lockstep.gangs.past_switch_wait gauge.
func (s *scheduler) pastSwitchWait() map[string]int {
	var pending []domain.Job
	s.mu.Lock()
	for _, sj := range s.active {
		if sj.job.State == domain.StatePending {
			pending = append(pending, sj.job)
		}
	}
	s.mu.Unlock()
	return s.waits.pastWait(pending, s.cfg.Now())
}

// queueDepths counts pending jobs by queue and pending reason, for the
// lockstep.queue.depth gauge.
func (s *scheduler) queueDepths() []telemetry.QueueDepth {
	type key struct{ queue, reason string }
	n := map[key]int{}
	s.mu.Lock()
	for _, sj := range s.active {
		if sj.job.State == domain.StatePending {
			n[key{sj.job.Spec.Queue, telemetry.PendingReason(sj.job.Reason)}]++
		}
	}
	s.mu.Unlock()
	out := make([]telemetry.QueueDepth, 0, len(n))
	for k, jobs := range n {
		out = append(out, telemetry.QueueDepth{Queue: k.queue, Reason: k.reason, Jobs: jobs})
	}
	return out
}

// seedFor derives a decision's seed from the job and attempt, so the same
// decision can be replayed (STYLE rule 17).
func seedFor(id string, attempt int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64() ^ uint64(attempt)
}
