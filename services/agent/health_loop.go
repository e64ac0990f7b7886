package agent

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/services/agent/health"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// HealthConfig turns on the agent's GPU health checks (issue 17, item 4).
type HealthConfig struct {
	// Interval is the time between polls; 0 turns health checks off.
	Interval time.Duration
	// GPUs are the node's GPUs as discovery found them; GPU Index i is GPU
	// i of the registration. SMI runs nvidia-smi for the polls
	// (health.Command); it may be nil only without GPUs.
	GPUs []discover.GPU
	SMI  discover.SMI
	// Program is a health-check program run on every poll, like Slurm's
	// HealthCheckProgram ("" for none); ProgramTimeout bounds each run
	// (health.DefaultProgramTimeout when 0).
	Program        string
	ProgramTimeout time.Duration
	// KernelLog, when set, is read for Xid errors on every poll.
	KernelLog health.KernelLog
	// Options are passed to the Checker after the above (tests: a clock).
	Options []health.Option
}

// Validate checks the health settings.
func (h HealthConfig) Validate() error {
	switch {
	case h.Interval < 0:
		return errors.Newf("--health-interval: %s is negative", h.Interval)
	case h.ProgramTimeout < 0:
		return errors.Newf("--health-check-timeout: %s is negative", h.ProgramTimeout)
	case h.Interval == 0 && h.Program != "":
		return errors.New("--health-check-program: runs only with --health-interval above 0")
	}
	return nil
}

// healthLoop polls the node's health and keeps the registration's
// withdrawn GPUs (domain.Node.Unhealthy) in step: a GPU that fails a check
// is withdrawn, re-registered and announced (gpu-unhealthy); it stays
// withdrawn until an operator resumes the node (nodestate ResumedAt), when
// it is returned and announced (gpu-healthy). A nil *healthLoop is health
// checks turned off.
type healthLoop struct {
	cfg     HealthConfig
	checker *health.Checker
	node    string
	gpus    int
	etcd    *clientv3.Client
	bus     *bus.Bus
	log     *slog.Logger

	mu     sync.Mutex
	faults []domain.GPUFault
	// reg is the registration in force (lease 0: none), and what it holds.
	lease  clientv3.LeaseID
	reg    domain.Node
	synced bool // reg.Unhealthy equals faults
	// pending are announcements not yet published (retried every poll).
	pending []events.Event
	// resumeSeen is the node state's ResumedAt as this loop last saw it;
	// stateSeen is false until it saw one.
	resumeSeen time.Time
	stateSeen  bool
	kick       chan struct{}
}

func newHealthLoop(cfg Config, cli *clientv3.Client, b *bus.Bus, log *slog.Logger) (*healthLoop, error) {
	h := cfg.Health
	if h.Interval == 0 {
		return nil, nil
	}
	opts := []health.Option{}
	if h.Program != "" {
		opts = append(opts, health.WithProgram(health.CommandProgram(h.Program, cmpOr(h.ProgramTimeout, health.DefaultProgramTimeout))))
	}
	if h.KernelLog != nil {
		opts = append(opts, health.WithKernelLog(h.KernelLog))
	}
	checker, err := health.NewChecker(h.GPUs, h.SMI, append(opts, h.Options...)...)
	if err != nil {
		return nil, errors.Wrap(err, "agent health checks")
	}
	return &healthLoop{cfg: h, checker: checker, node: cfg.Node.Name, gpus: cfg.Node.GPUs, etcd: cli, bus: b,
		log: log.With("loop", "health"), kick: make(chan struct{}, 1)}, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// restore takes up the withdrawals an earlier run of this agent registered
// (its inventory record) that no resume has cleared since: a restart does
// not return a broken GPU. Best effort: without them the next poll finds
// what is still broken.
func (h *healthLoop) restore(ctx context.Context) {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := h.etcd.Get(ctx, store.InventoryKey(h.node))
	if err != nil || len(resp.Kvs) == 0 {
		return
	}
	prev, err := domain.DecodeNode(resp.Kvs[0].Value)
	if err != nil {
		h.log.Warn("own inventory record unreadable; earlier GPU withdrawals forgotten", "err", err)
		return
	}
	st, _ := h.nodeState(ctx)
	kept, cleared := resumed(prev.Unhealthy, st.ResumedAt)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range kept {
		if f.GPU < h.gpus {
			h.faults = append(h.faults, f)
		}
	}
	if gpus := gpusOf(cleared); len(gpus) > 0 {
		// Resumed while this agent was away: announce it now.
		h.pending = append(h.pending, events.Event{Type: events.GPUHealthy, Node: h.node, GPUs: gpus, Time: st.ResumedAt.UTC()})
	}
}

func gpusOf(fs []domain.GPUFault) []int {
	out := make([]int, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.GPU)
	}
	return out
}

// withdrawn is what the next registration lists as withdrawn.
func (h *healthLoop) withdrawn() []domain.GPUFault {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.faults)
}

// registered records the registration serveEpoch wrote (lease 0: it
// ended); the loop re-writes it if the faults moved on meanwhile.
func (h *healthLoop) registered(lease clientv3.LeaseID, n domain.Node) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.lease, h.reg = lease, n
	h.synced = slices.Equal(n.Unhealthy, h.faults)
	h.mu.Unlock()
	h.nudge()
}

func (h *healthLoop) nudge() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// run polls until ctx ends.
func (h *healthLoop) run(ctx context.Context) {
	if h == nil {
		return
	}
	states := make(chan domain.NodeState, 1)
	go h.watchState(ctx, states)
	t := time.NewTicker(h.cfg.Interval)
	defer t.Stop()
	h.poll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.poll(ctx)
		case st := <-states:
			h.resume(st)
		case <-h.kick:
		}
		h.sync(ctx)
	}
}

// poll runs the checks once and withdraws what newly failed.
func (h *healthLoop) poll(ctx context.Context) {
	report, err := h.checker.Check(ctx)
	if err != nil {
		return // ctx ended
	}
	for _, n := range report.Notes {
		h.log.Debug("health check note", "note", n)
	}
	h.mu.Lock()
	next, added, notes := withdraw(h.faults, report, h.gpus)
	h.faults = next
	if len(added) > 0 {
		h.synced = false
	}
	for _, f := range added {
		h.pending = append(h.pending, events.Event{Type: events.GPUUnhealthy, Node: h.node, GPUs: []int{f.GPU}, Reason: f.Reason, Time: f.Since})
	}
	h.mu.Unlock()
	for _, n := range notes {
		h.log.Warn("health check finding not registered", "finding", n)
	}
	for _, f := range added {
		h.log.Warn("GPU withdrawn from placement", "gpu", f.GPU, "reason", f.Reason)
	}
	h.sync(ctx)
}

// resume returns the GPUs an operator's resume covers. The first node
// state this loop sees covers the faults withdrawn no later than its
// ResumedAt (the drain service's clock); every later resume, seen change,
// covers every fault held, all withdrawn before the agent saw it: a node
// whose clock runs ahead must not make a resume miss its GPUs.
func (h *healthLoop) resume(st domain.NodeState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := !h.stateSeen
	changed := !st.ResumedAt.Equal(h.resumeSeen)
	h.stateSeen, h.resumeSeen = true, st.ResumedAt
	var kept, cleared []domain.GPUFault
	switch {
	case first:
		kept, cleared = resumed(h.faults, st.ResumedAt)
	case changed && !st.ResumedAt.IsZero():
		cleared = h.faults
	}
	if len(cleared) == 0 {
		return
	}
	h.faults, h.synced = kept, false
	gpus := gpusOf(cleared)
	for _, f := range cleared {
		for _, g := range h.cfg.GPUs {
			if g.Index == f.GPU {
				h.checker.Resume(g.UUID)
			}
		}
	}
	h.pending = append(h.pending, events.Event{Type: events.GPUHealthy, Node: h.node, GPUs: gpus, Time: st.ResumedAt.UTC()})
	h.log.Info("GPUs returned to placement by a node resume", "gpus", gpus)
}

// sync writes the faults into the registration in force, then publishes
// the announcements waiting for it: an event never runs ahead of the
// record it announces. What fails is retried on the next poll.
func (h *healthLoop) sync(ctx context.Context) {
	h.mu.Lock()
	lease, reg, synced := h.lease, h.reg, h.synced
	reg.Unhealthy = slices.Clone(h.faults)
	h.mu.Unlock()
	if lease == 0 {
		return // serveEpoch registers with the faults when it can
	}
	if !synced {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		inv := reg
		inv.Epoch = 0
		// Only over this agent's own registration: one of an older epoch,
		// or none (the lease lost), is not rewritten.
		resp, err := h.etcd.Txn(wctx).
			If(clientv3.Compare(clientv3.LeaseValue(store.NodeKey(h.node)), "=", lease)).
			Then(clientv3.OpPut(store.NodeKey(h.node), store.MustJSON(reg), clientv3.WithLease(lease)),
				clientv3.OpPut(store.InventoryKey(h.node), store.MustJSON(inv))).Commit()
		cancel()
		if err != nil || !resp.Succeeded {
			if err != nil && ctx.Err() == nil {
				h.log.Warn("re-registering withdrawn GPUs failed; will retry", "err", err)
			}
			return
		}
		h.mu.Lock()
		if h.lease == lease {
			h.reg = reg
			h.synced = slices.Equal(reg.Unhealthy, h.faults)
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	pending := h.pending
	h.pending = nil
	h.mu.Unlock()
	for i, ev := range pending {
		if err := h.bus.PublishEvent(ctx, ev); err != nil {
			h.mu.Lock()
			h.pending = append(pending[i:], h.pending...)
			h.mu.Unlock()
			if ctx.Err() == nil {
				h.log.Warn("announcing a GPU withdrawal failed; will retry", "event", ev.Type, "err", err)
			}
			return
		}
	}
}

// nodeState reads the operator's state of this node (zero when none).
func (h *healthLoop) nodeState(ctx context.Context) (domain.NodeState, int64) {
	resp, err := h.etcd.Get(ctx, store.NodeStateKey(h.node))
	if err != nil {
		return domain.NodeState{}, 0
	}
	if len(resp.Kvs) == 0 {
		return domain.NodeState{}, resp.Header.Revision
	}
	st, err := domain.DecodeNodeState(resp.Kvs[0].Value)
	if err != nil {
		h.log.Warn("node state unreadable; ignored", "err", err)
		return domain.NodeState{}, resp.Header.Revision
	}
	return st, resp.Header.Revision
}

// watchState sends every node state of this node, the current one first,
// re-reading whenever the watch breaks.
func (h *healthLoop) watchState(ctx context.Context, out chan domain.NodeState) {
	send := func(st domain.NodeState) {
		select {
		case <-out: // only the newest matters
		default:
		}
		out <- st
	}
	for ctx.Err() == nil {
		st, rev := h.nodeState(ctx)
		if rev == 0 {
			clock.Sleep(ctx, time.Second)
			continue
		}
		send(st)
		// A live watch: a plain one on a frozen etcd member would deliver
		// nothing until the thaw.
		wctx, cancel := context.WithCancel(ctx)
		for resp := range store.Watch(wctx, h.etcd, store.NodeStateKey(h.node), rev).C {
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut {
					continue
				}
				st, err := domain.DecodeNodeState(ev.Kv.Value)
				if err != nil {
					h.log.Warn("node state unreadable; ignored", "err", err)
					continue
				}
				send(st)
			}
		}
		cancel()
		clock.Sleep(ctx, time.Second)
	}
}
