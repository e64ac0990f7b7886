package sim

import (
	"container/heap"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// epoch is virtual time zero: the Philly trace's first day. Placement and
// the queue policy see base + offset; only differences matter.
var epoch = time.Date(2017, 8, 7, 0, 0, 0, 0, time.UTC)

type jobState uint8

const (
	stUnseen jobState = iota
	stWaiting
	stRunning
	stDone
	stRejected
)

// job is one trace job during a run.
type job struct {
	trace.Job
	pj     queue.PendingJob
	state  jobState
	start  time.Duration
	end    time.Duration
	place  domain.Placement
	leaves int
	spines int
	// pods and podAt: the per-pod policy's bound pods and when each was
	// bound.
	pods  []domain.NodePlacement
	podAt []time.Duration
}

// engine is one simulation run.
type engine struct {
	cfg  Config
	c    *fabric.Cluster
	snap *place.Snapshot
	pol  scheduler
	now  time.Duration

	jobs    []job
	byID    map[string]int32
	next    int // next arrival
	pending pending
	// running mirrors the running jobs for the queue policies, sorted by
	// expected end (see addRunning); runJob maps its entries to job
	// indices.
	running []queue.RunningJob
	runJob  []int32
	events  eventHeap
	free    int
	// smallWork is queue.JobWork summed over the waiting 1-GPU jobs, kept
	// as they arrive and start: passes see only a window of the queue,
	// and the queue policy scales its size handicap to all of it.
	smallWork int64
	// maxFit is the largest GPUs-per-node any node of the cluster has.
	maxFit int

	// What changed since the last pass.
	released, woke       bool
	fitsGang, fitsPod    bool
	passes, ended, total int

	m       *collector
	buf     []queue.PendingJob
	atLeast []int
}

// scheduler is a policy's scheduling pass and its event hooks.
type scheduler interface {
	// blind reports whether the policy sees no topology labels.
	blind() bool
	// pass runs at e.now after the instant's events; it starts jobs with
	// e.start (or binds pods).
	pass(e *engine)
	// tick handles a backfill tick.
	tick(e *engine)
	// request adjusts a job's placement request (topology constraints).
	request(e *engine, j *job)
}

func newEngine(cfg Config) *engine {
	c := cfg.Cluster
	e := &engine{cfg: cfg, c: c, byID: make(map[string]int32, len(cfg.Jobs))}
	switch cfg.Policy {
	case PerPod:
		e.pol = &perPod{}
	case GangBlind:
		e.pol = &gangBlind{}
	case SlurmLike:
		e.pol = &slurm{}
	default:
		e.pol = &lockstep{}
	}
	nodes := c.Nodes
	if e.pol.blind() {
		nodes = c.Unlabelled()
	}
	e.snap = &place.Snapshot{PortBase: store.MasterPortBase, PortCount: store.MasterPortCount}
	for _, n := range nodes {
		e.snap.Nodes = append(e.snap.Nodes, place.NodeView{Node: &n, Free: seq(n.GPUs), Up: true})
		e.free += n.GPUs
		e.maxFit = max(e.maxFit, n.GPUs)
	}
	e.snap.Sort()
	_ = e.snap.Prepare() // labels from fabric are consistent by construction

	e.jobs = make([]job, len(cfg.Jobs))
	for i, tj := range cfg.Jobs {
		j := &e.jobs[i]
		j.Job = tj
		e.byID[tj.ID] = int32(i)
		limit := cfg.TimeLimit
		if limit <= 0 && cfg.LimitFactor > 0 {
			limit = time.Duration(float64(tj.Duration)*cfg.LimitFactor + float64(time.Second-1)).Truncate(time.Second)
		}
		q := tj.Queue
		if q == "" {
			q = jobspec.DefaultQueue
		}
		j.pj = queue.PendingJob{
			ID: tj.ID, Queue: q, SubmittedAt: epoch.Add(tj.Submit), TimeLimit: limit,
			Request: place.Request{
				JobID: tj.ID, Nodes: tj.Nodes, GPUsPerNode: tj.GPUsPerNode, TasksPerNode: 1,
			},
		}
		e.pol.request(e, j)
	}
	e.total = len(e.jobs)
	e.m = newCollector(e)
	return e
}

// run replays the whole stream.
func (e *engine) run() {
	for {
		t, ok := e.nextTime()
		if !ok {
			break
		}
		e.m.advance(t)
		e.now = t
		for len(e.events) > 0 && e.events[0].at == t {
			ev := heap.Pop(&e.events).(event)
			switch ev.kind {
			case evEnd:
				e.finish(int(ev.job))
			case evWake:
				e.woke = true
			case evTick:
				e.pol.tick(e)
			}
		}
		for e.next < len(e.jobs) && e.jobs[e.next].Submit == t {
			e.arrive(e.next)
			e.next++
		}
		if e.free > 0 && (e.released || e.woke || e.fitsGang || e.fitsPod) {
			e.pol.pass(e)
			e.passes++
		}
		e.released, e.woke, e.fitsGang, e.fitsPod = false, false, false, false
	}
	e.m.advance(e.now)
}

func (e *engine) nextTime() (time.Duration, bool) {
	var t time.Duration
	ok := false
	if e.next < len(e.jobs) {
		t, ok = e.jobs[e.next].Submit, true
	}
	if len(e.events) > 0 && (!ok || e.events[0].at < t) {
		t, ok = e.events[0].at, true
	}
	return t, ok
}

func (e *engine) at(d time.Duration) time.Time { return epoch.Add(d) }

func (e *engine) arrive(i int) {
	j := &e.jobs[i]
	if !e.feasible(j) {
		j.state = stRejected
		e.ended++
		return
	}
	j.state = stWaiting
	if j.GPUs() == 1 {
		e.smallWork += queue.JobWork(j.pj)
	}
	e.pending.push(e, int32(i))
	if j.GPUs() <= e.free {
		e.fitsGang = true
	}
	if j.GPUsPerNode <= e.free {
		e.fitsPod = true
	}
}

// decided keeps job i's topology wait clock after a pass decided d for it
// (queue.NextWaitSince, as the placement service does) and, when the wait
// starts now, wakes the policy when it ends.
func (e *engine) decided(i int, d queue.Decision) {
	r := &e.jobs[i].pj.Request
	was := r.WaitSince
	r.WaitSince = queue.NextWaitSince(d, was, e.at(e.now))
	if !was.IsZero() || r.WaitSince.IsZero() {
		return
	}
	for _, w := range []time.Duration{r.Topology.WaitForSwitches, r.Topology.PreferredWait} {
		if w > 0 {
			e.push(event{at: e.now + w, kind: evWake, job: int32(i)})
		}
	}
}

// feasible reports whether the idle cluster could hold the job at all.
func (e *engine) feasible(j *job) bool {
	if j.GPUsPerNode > e.maxFit {
		return false
	}
	n := 0
	for _, nd := range e.c.Nodes {
		if nd.GPUs >= j.GPUsPerNode {
			n++
		}
	}
	return n >= j.Nodes
}

// start runs job i on p from now. taken says the placement's GPUs are
// already out of the snapshot (the per-pod policy binds as it goes).
func (e *engine) start(i int, p domain.Placement, taken bool) {
	j := &e.jobs[i]
	if j.state == stWaiting && j.GPUs() == 1 {
		e.smallWork -= queue.JobWork(j.pj)
	}
	// MASTER_PORTs never run out in a simulation (2,000 per node); without
	// them the snapshot has no port maps for every pass to clone.
	p.MasterAddr, p.MasterPort = "", 0
	if !taken {
		e.snap.Take(p)
		e.free -= p.GPUCount()
		e.m.hold(p.GPUCount())
	}
	j.state, j.start, j.place = stRunning, e.now, p
	j.leaves, j.spines = e.c.Span(p.NodeNames())
	stretch := e.stretch(j)
	run := time.Duration(float64(j.Duration) * stretch)
	j.end = e.now + run
	e.push(event{at: j.end, kind: evEnd, job: int32(i)})
	e.addRunning(i, queue.RunningJob{
		ID: j.ID, Queue: j.pj.Queue, Placement: p, GPUs: j.GPUs(), StartedAt: e.at(e.now), TimeLimit: j.pj.TimeLimit,
	})
	e.m.started(j, stretch)
}

func (e *engine) stretch(j *job) float64 {
	return 1 + e.cfg.LeafPenalty*float64(max(j.leaves-1, 0)) + e.cfg.SpinePenalty*float64(max(j.spines-1, 0))
}

func (e *engine) finish(i int) {
	j := &e.jobs[i]
	e.snap.Release(j.place)
	g := j.place.GPUCount()
	e.free += g
	e.released = true
	j.state = stDone
	e.removeRunning(i)
	e.m.finished(j, g, e.stretch(j))
	e.ended++
	if e.cfg.Progress != nil && e.ended%2048 == 0 {
		e.cfg.Progress(e.ended, e.total)
	}
}

// window returns the queue policy's input: the candidates (see pending)
// as PendingJobs, in a reused buffer.
func (e *engine) window(fits func(shapeKey) bool) []queue.PendingJob {
	e.buf = e.buf[:0]
	for _, i := range e.pending.candidates(e, fits) {
		e.buf = append(e.buf, e.jobs[i].pj)
	}
	return e.buf
}

// startPlan applies a queue plan: its Start decisions, and the wait
// clocks of the others.
func (e *engine) startPlan(plan queue.Plan) {
	for _, d := range plan.Decisions {
		i := int(e.byID[d.JobID])
		e.decided(i, d)
		if d.Action == queue.Start {
			e.start(i, *d.Placement, false)
		}
	}
	e.pending.prune(e)
}

func (e *engine) input(pending []queue.PendingJob) queue.Input {
	return queue.Input{
		Snapshot: e.snap, Pending: pending, Running: e.running, Config: e.cfg.Queues,
		Now: e.at(e.now), Seed: e.cfg.Seed, SmallWork: e.smallWork,
	}
}

func (e *engine) push(ev event) { heap.Push(&e.events, ev) }

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

type eventKind uint8

const (
	evEnd eventKind = iota
	evWake
	evTick
)

type event struct {
	at   time.Duration
	kind eventKind
	job  int32
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	if h[a].kind != h[b].kind {
		return h[a].kind < h[b].kind
	}
	return h[a].job < h[b].job
}
func (h eventHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
