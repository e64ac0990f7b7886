package placement

import (
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// switchWaits keeps, in the leader's memory, when each pending job's
// bounded topology wait (maxSwitches + waitForSwitches, preferred +
// preferredWait) started: the input place.Request.WaitSince of every
// plan, updated from each plan's decisions with queue.NextWaitSince, the
// function the simulator uses too. The wait starts at the first cycle
// that finds the job could start but only on more switches than it asked
// for, not at submission (Slurm's wait4switch_start).
//
// The clocks are not persisted: after a leader failover the new leader
// starts them afresh, so a job waiting for switches then waits up to its
// full wait again. That delay is bounded by one wait per failover, and
// keeps the job record free of a field that changes every cycle.
//
// Entries are keyed by job and attempt (a requeued job waits afresh) and
// dropped when the job is no longer pending in that attempt: started,
// requeued, cancelled or deleted.
//
// The zero value is ready to use.
type switchWaits struct {
	mu    sync.Mutex
	since map[waitKey]time.Time
}

type waitKey struct {
	id      string
	attempt int
}

// apply sets each pending job's WaitSince from the clocks.
func (w *switchWaits) apply(pending []queue.PendingJob, seen jobsSeen) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range pending {
		sj, _ := seen.get(pending[i].ID)
		pending[i].Request.WaitSince = w.since[waitKey{pending[i].ID, sj.job.Attempt}]
	}
}

// update records a plan's decisions made at now and forgets the jobs seen
// no longer pending.
func (w *switchWaits) update(plan queue.Plan, in queue.Input, seen jobsSeen, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since == nil {
		w.since = map[waitKey]time.Time{}
	}
	// The plan's input says when each wait started (apply), so a decision
	// is matched with the clock it was made with.
	before := make(map[string]time.Time, len(in.Pending))
	for _, j := range in.Pending {
		before[j.ID] = j.Request.WaitSince
	}
	for _, d := range plan.Decisions {
		sj, ok := seen.get(d.JobID)
		if !ok {
			continue
		}
		k := waitKey{d.JobID, sj.job.Attempt}
		if d.Action == queue.Start {
			// Here a start is a proposal, which gang may refuse (a
			// conflict): the clock stands until the attempt leaves pending
			// (the sweep below), or repeated conflicts would restart the
			// wait each time and it would no longer be bounded.
			continue
		}
		if t := queue.NextWaitSince(d, before[d.JobID], now); t.IsZero() {
			delete(w.since, k)
		} else {
			w.since[k] = t
		}
	}
	for k := range w.since {
		if sj, ok := seen.get(k.id); !ok || sj.job.State != domain.StatePending || sj.job.Attempt != k.attempt {
			delete(w.since, k)
		}
	}
}

// requestOf is the placement request a plan used for a pending job, with
// its wait clock; RequestForJob (wait not started) for a job not in it.
func requestOf(in queue.Input, j domain.Job) place.Request {
	for _, p := range in.Pending {
		if p.ID == j.ID {
			return p.Request
		}
	}
	return place.RequestForJob(j)
}

// size is how many clocks are kept, for tests.
func (w *switchWaits) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.since)
}

// pastWait counts, by queue, the pending jobs whose wait clock started and
// whose every bounded topology wait has run out at now, yet still wait
// (lockstep.gangs.past_switch_wait): they may now start relaxed, so what
// holds them is something else (resources, priority, a reservation).
// Every queue with a pending job has a count, 0 included.
func (w *switchWaits) pastWait(pending []domain.Job, now time.Time) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, j := range pending {
		out[j.Spec.Queue] += 0
		r := place.RequestForJob(j)
		r.WaitSince = w.since[waitKey{j.ID, j.Attempt}]
		if r.WaitSince.IsZero() {
			continue
		}
		end := r.WaitSince
		if t := r.Topology; t.MaxSwitches > 0 {
			end = later(end, r.WaitEnd(t.WaitForSwitches, now))
		}
		if t := r.Topology; t.Preferred != place.LevelNone {
			end = later(end, r.WaitEnd(t.PreferredWait, now))
		}
		if !now.Before(end) {
			out[j.Spec.Queue]++
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
