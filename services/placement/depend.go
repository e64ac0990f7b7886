package placement

import (
	"context"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/depend"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// held is a pending job kept out of a cycle's plan: waiting (pending
// with reason, Dependency or JobArrayTaskLimit) or, for a dependency,
// never to be satisfied.
type held struct {
	job      seenJob
	decision depend.Decision
	reason   string
}

// jobSink follows the job records: jobChanged takes every entry, and
// replaying marks the mirror incomplete, so that a dependency on a job
// whose record has not been replayed yet is not taken for one on an
// unknown job.
type jobSink struct{ s *scheduler }

func (k jobSink) Replay() {
	k.s.mu.Lock()
	k.s.current = false
	k.s.mu.Unlock()
}

func (k jobSink) Apply(e jobs.Entry) { k.s.jobChanged(e) }

func (k jobSink) Current() {
	k.s.mu.Lock()
	k.s.current, k.s.loaded = true, true
	k.s.mu.Unlock()
	k.s.poke()
}

// nameKey groups namesakes for singleton.
type nameKey struct{ owner, name string }

// dependencyGate asks depend.Decide about each pending job that has
// dependencies or is a singleton, from the mirrored records. The caller
// holds s.mu.
type dependencyGate struct {
	s         *scheduler
	now       time.Time
	namesakes map[nameKey][]depend.Job // built on first use
	arrays    map[string][]depend.Job  // tasks by array ID, built on first use
}

// decide is the verdict for one pending job.
func (g *dependencyGate) decide(j domain.Job) depend.Decision {
	if len(j.Spec.Dependencies) == 0 && !j.Spec.Singleton {
		return depend.Decision{Verdict: depend.Ready}
	}
	in := depend.Input{Job: depend.JobOf(j), Dependencies: j.Spec.Dependencies, Singleton: j.Spec.Singleton,
		Known: map[string]depend.Job{}, Now: g.now, UnknownGrace: g.s.cfg.DependencyGrace}
	for _, d := range j.Spec.Dependencies {
		for _, id := range d.Jobs {
			if sj, ok := g.s.active[id]; ok {
				in.Known[id] = depend.JobOf(sj.job)
			} else if e, ok := g.s.ended[id]; ok {
				in.Known[id] = e
			} else if tasks := g.tasksOf(id); len(tasks) > 0 {
				// An array's ID has no record of its own: the dependency
				// is on all its tasks.
				in.Known[id] = depend.ArrayJob(id, tasks)
			}
		}
	}
	if j.Spec.Singleton {
		in.Namesakes = g.namesakesOf(j)
	}
	d := depend.Decide(in)
	if d.Verdict == depend.Never && !g.s.current {
		// A job named may just not be replayed yet: decide once the
		// mirror is complete.
		d.Verdict = depend.Wait
	}
	return d
}

// tasksOf lists the mirrored tasks of array id.
func (g *dependencyGate) tasksOf(id string) []depend.Job {
	if g.arrays == nil {
		g.arrays = map[string][]depend.Job{}
		for tid, sj := range g.s.active {
			if base, _, ok := jobspec.SplitTaskID(tid); ok {
				g.arrays[base] = append(g.arrays[base], depend.JobOf(sj.job))
			}
		}
		for tid, e := range g.s.ended {
			if base, _, ok := jobspec.SplitTaskID(tid); ok {
				g.arrays[base] = append(g.arrays[base], e)
			}
		}
	}
	return g.arrays[id]
}

func (g *dependencyGate) namesakesOf(j domain.Job) []depend.Job {
	if g.namesakes == nil {
		g.namesakes = map[nameKey][]depend.Job{}
		for _, sj := range g.s.active {
			k := nameKey{sj.job.Owner, sj.job.Spec.Name}
			g.namesakes[k] = append(g.namesakes[k], depend.JobOf(sj.job))
		}
	}
	return g.namesakes[nameKey{j.Owner, j.Spec.Name}]
}

// applyDependencies records why each held job waits, and cancels those
// whose dependencies can never be satisfied (Slurm's
// kill_invalid_depend), a few at a time.
func (s *scheduler) applyDependencies(ctx context.Context, hs []held, now time.Time) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, cycleFanOut)
	for _, h := range hs {
		j := h.job.job
		if h.decision.Verdict == depend.Wait && j.Reason == h.reason && j.Detail == h.decision.Detail {
			continue // nothing to record
		}
		if ctx.Err() != nil {
			break
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if h.decision.Verdict == depend.Wait {
				s.explain(ctx, h.job, h.reason, h.decision.Detail)
				return
			}
			s.neverSatisfied(ctx, j, h.decision.Detail, now)
		}()
	}
	wg.Wait()
}

// publishGrace bounds sending an event whose record is already written,
// past the end of the leader's term.
const publishGrace = 10 * time.Second

// neverSatisfied cancels a pending job whose dependency can never hold.
// It holds no resources, so there is nothing to release.
func (s *scheduler) neverSatisfied(ctx context.Context, j domain.Job, detail string, now time.Time) {
	reason := domain.ReasonDependencyNeverSatisfied + ": " + detail
	job, changed, err := s.Jobs.Update(ctx, j.ID, func(cur *domain.Job) (bool, error) {
		if cur.State != domain.StatePending {
			return false, nil
		}
		return cur.Finish(j.Attempt, domain.StateCancelled, reason, nil, now), nil
	})
	if err != nil {
		s.Log.Warn("job with an unsatisfiable dependency not cancelled", "job", j.ID, "err", err)
		return
	}
	if !changed {
		return
	}
	ctx = telemetry.WithJob(ctx, job.ID)
	s.Tel.Metrics.JobFinished(ctx, job)
	s.Log.InfoContext(ctx, "job cancelled: dependency never satisfied", "job", job.ID, "reason", reason)
	ev := events.ForJob(events.Cancelled, job, now)
	ev.Reason, ev.Actor = reason, events.SystemActor("placement")
	// The record is written: the event must follow even if the leader's
	// term ends now (ctx is the term's), or the history would never see
	// the job end; no later cycle sends it for a finished job.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishGrace)
	defer cancel()
	if err := s.Bus.PublishEvent(pctx, ev); err != nil {
		s.Log.WarnContext(ctx, "cancelled event not sent", "job", job.ID, "err", err)
	}
}
