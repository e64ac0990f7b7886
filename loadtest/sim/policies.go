package sim

import (
	"hash/fnv"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// lockstep is the placement service's policy: PlanBackfill (in the order
// Config.Queues sets: by default no job-size handicap) on every event,
// each multi-node job asking for its fewest leaves for a while.
type lockstep struct{}

func (*lockstep) blind() bool { return false }

func (*lockstep) request(e *engine, j *job) {
	t := &j.pj.Request.Topology
	switch {
	case j.MaxSwitches > 0:
		t.MaxSwitches, t.WaitForSwitches = j.MaxSwitches, j.SwitchWait
	case j.Nodes > 1 && e.cfg.SwitchWait > 0:
		if k := e.c.MinLeaves(j.Nodes); k > 0 {
			t.MaxSwitches, t.WaitForSwitches = k, e.cfg.SwitchWait
		}
	}
}

func (*lockstep) pass(e *engine) {
	e.startPlan(queue.PlanBackfill(e.input(e.window(e.gangFits()))))
}

func (*lockstep) tick(*engine) {}

// gangBlind is Volcano-like: all or nothing, FIFO with skipping, on a
// snapshot without topology labels.
type gangBlind struct{}

func (*gangBlind) blind() bool           { return true }
func (*gangBlind) request(*engine, *job) {}
func (*gangBlind) tick(*engine)          {}
func (*gangBlind) pass(e *engine) {
	e.startPlan(queue.PlanFIFOSkip(e.input(e.window(e.gangFits()))))
}

// slurm is the main scheduler (strict submission order, stop at the first
// job that does not fit) at every event, plus EASY backfill every
// BackfillInterval after a change.
type slurm struct {
	dirty, ticking bool
}

func (*slurm) blind() bool { return false }

// request keeps a trace's own --switches; Slurm adds none by itself.
func (*slurm) request(_ *engine, j *job) {
	if j.MaxSwitches > 0 {
		j.pj.Request.Topology.MaxSwitches, j.pj.Request.Topology.WaitForSwitches = j.MaxSwitches, j.SwitchWait
	}
}

func (s *slurm) pass(e *engine) {
	now := e.at(e.now)
	for _, i := range e.pending.candidates(e, e.gangFits()) {
		j := &e.jobs[i]
		r := place.Place(e.snap, j.pj.Request, now, seedFor(e.cfg.Seed, j.ID))
		if r.Code != place.Placed {
			e.decided(int(i), queue.Decision{JobID: j.ID, Action: queue.Pending, ReasonCode: r.ReasonCode})
			break
		}
		e.start(int(i), *r.Placement, false)
		if e.free == 0 {
			break
		}
	}
	e.pending.prune(e)
	s.dirty = true
	if !s.ticking {
		s.ticking = true
		iv := e.cfg.BackfillInterval
		e.push(event{at: (e.now/iv + 1) * iv, kind: evTick})
	}
}

func (s *slurm) tick(e *engine) {
	s.ticking = false
	if !s.dirty || e.free == 0 {
		return
	}
	s.dirty = false
	// Slurm's default priority has no job-size factor
	// (PriorityWeightJobSize=0): its backfill considers jobs in
	// submission order. Nor does it weigh a gang's topology slowdown.
	in := e.input(e.window(e.gangFits()))
	in.Config.SizeHandicap = -1
	in.Config.Stretch = queue.Stretch{Leaf: -1, Spine: -1}
	e.startPlan(queue.PlanBackfill(in))
}

// perPod is the Kubernetes default scheduler: every node's share of a gang
// is a pod, bound on its own as soon as it fits.
type perPod struct{}

func (*perPod) blind() bool           { return true }
func (*perPod) request(*engine, *job) {}
func (*perPod) tick(*engine)          {}

func (*perPod) pass(e *engine) {
	// A pod size that did not fit will not fit later in the pass: binding
	// only takes GPUs.
	tooBig := e.maxFit + 1
	for _, i := range e.pending.candidates(e, e.podFits()) {
		j := &e.jobs[i]
		if j.GPUsPerNode >= tooBig {
			continue
		}
		req := j.pj.Request
		req.Nodes -= len(j.pods)
		res := place.PlacePods(e.snap, req)
		for _, pod := range res.Pods {
			j.pods = append(j.pods, pod)
			j.podAt = append(j.podAt, e.now)
			e.free -= len(pod.GPUs)
			e.m.hold(len(pod.GPUs))
		}
		if !res.Complete() {
			tooBig = min(tooBig, j.GPUsPerNode)
		} else {
			e.m.partial(j, e.now)
			e.start(int(i), domain.Placement{Nodes: j.pods}, true)
		}
		if e.free == 0 {
			break
		}
	}
	e.pending.prune(e)
}

// seedFor derives a job's placement seed from the run's.
func seedFor(seed uint64, id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return seed ^ h.Sum64()
}
