package placement

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/arraylimit"
	"github.com/lockstep-dev/lockstep/shared/core/depend"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// cycle runs one scheduling pass: build the queue policy's input from the
// caches, plan, then propose what starts and explain what waits.
func (s *scheduler) cycle(ctx context.Context) {
	// A new leader's mirror fills record by record: a plan on part of it
	// would count an array done from the tasks loaded so far, start a
	// singleton beside its running namesake, or give GPUs to a job ahead of
	// one not loaded yet. Current pokes the first full cycle.
	s.mu.Lock()
	loaded := s.loaded
	s.mu.Unlock()
	if !loaded {
		return
	}
	// Wall time, not the clock decisions read (cfg.Now): the metric is of
	// the loop's pace.
	start := time.Now()
	defer func() {
		if ctx.Err() == nil { // a cycle cut short by a step-down is not one
			s.Tel.Metrics.PlacementCycle.Record(ctx, time.Since(start).Seconds())
		}
	}()
	now := s.cfg.Now()
	caches := s.caches()
	revs := make([]interface{ Rev() int64 }, len(caches))
	for i, c := range caches {
		revs[i] = c
	}
	caught := store.CatchUp(ctx, s.Etcd, 200*time.Millisecond, revs...)
	in, seen, held := s.input(now)
	s.applyDependencies(ctx, held, now)
	if ctx.Err() != nil {
		return
	}
	plan := queue.PlanBackfill(in)
	s.waits.update(plan, in, seen, now)
	// Proposals and pending reasons are independent writes, each a round
	// trip to JetStream: send them a few at a time rather than one after
	// another, so a cycle that starts many gangs is not paced by latency.
	var wg sync.WaitGroup
	slots := make(chan struct{}, cycleFanOut)
	for _, d := range plan.Decisions {
		if ctx.Err() != nil {
			break
		}
		sj, _ := seen.get(d.JobID)
		k, next := waitKey{sj.job.ID, sj.job.Attempt}, reasonText{d.Reason, d.Detail}
		if d.Action != queue.Start && !s.reasons.due(k, sj.job.PendingSince, reasonText{sj.job.Reason, sj.job.Detail}, sj.rev, d.ReasonCode, next, now) {
			continue // nothing to record, or not yet (reasons.go)
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if d.Action == queue.Start {
				note := ""
				if d.Relaxed || d.Backfilled {
					note = d.Detail
				}
				s.propose(ctx, sj, *d.Placement, note, now)
				return
			}
			if rev, ok := s.explain(ctx, sj, d.Reason, d.Detail); ok {
				s.reasons.wrote(k, d.ReasonCode, next, rev, now)
			}
		}()
	}
	wg.Wait()
	s.reasons.forget(func(k waitKey) bool {
		sj, ok := seen.get(k.id)
		return ok && sj.job.State == domain.StatePending && sj.job.Attempt == k.attempt
	})
	if ctx.Err() != nil {
		return
	}
	if caught {
		// Evicting is not undone by a later cycle, as a proposal is: never
		// on a view not known to be caught up.
		s.preempt(ctx, in, plan, seen, now)
	}
}

// cycleFanOut bounds the proposals and pending reasons one cycle has in
// flight at once.
const cycleFanOut = 16

// input assembles the queue policy's input: the snapshot, running gangs
// (allocations, plus proposals in flight), pending jobs and queue usage.
// Pending jobs whose dependencies do not let them start, and array tasks
// over their array's limit, are left out of it and returned as held.
func (s *scheduler) input(now time.Time) (queue.Input, jobsSeen, []held) {
	snap := s.snapshot()

	s.mu.Lock()
	defer s.mu.Unlock()
	seen := jobsSeen(maps.Clone(s.active))
	running := make([]queue.RunningJob, 0, len(seen)+len(s.inflight))
	allocated := make(map[string]bool, len(seen))
	// Read in place, not copied (a thousand records every cycle): the
	// holdings cache takes no change meanwhile, and its change callback
	// never waits on s.mu.
	s.allocs.Each(func(_ string, a store.Holding) {
		allocated[a.JobID] = true
		sj, _ := seen.get(a.JobID)
		running = append(running, runningJob(a.JobID, sj.job, a.Placement, startOf(sj.job, a.Allocation, now)))
	})
	for id, p := range s.inflight {
		sj, ok := seen.get(id)
		if !ok || sj.job.State != domain.StatePending || sj.job.Attempt != p.attempt ||
			sj.job.Conflicts != p.conflicts || now.After(p.deadline) {
			delete(s.inflight, id)
			continue
		}
		snap.Take(p.placement)
		running = append(running, runningJob(id, sj.job, p.placement, now))
	}
	var pending []queue.PendingJob
	var holds []held
	gate := dependencyGate{s: s, now: now}
	var ready []*seenJob
	var tasks []arraylimit.Task
	for id, sj := range seen {
		_, busy := s.inflight[id]
		// A pending task with an allocation was reserved and its record
		// not yet updated: it counts against the limit already.
		task, isTask := arraylimit.TaskOf(sj.job, busy || allocated[id])
		if sj.job.State != domain.StatePending || busy {
			if isTask {
				tasks = append(tasks, task)
			}
			continue
		}
		if d := gate.decide(sj.job); d.Verdict != depend.Ready {
			holds = append(holds, held{job: *sj, decision: d, reason: domain.ReasonDependency})
			continue
		}
		if isTask {
			task.Candidate = true
			tasks = append(tasks, task)
		}
		ready = append(ready, sj)
	}
	arrayHeld := arraylimit.Hold(tasks)
	for _, sj := range ready {
		id := sj.job.ID
		if detail, ok := arrayHeld[id]; ok {
			holds = append(holds, held{job: *sj, decision: depend.Decision{Verdict: depend.Wait, Detail: detail}, reason: domain.ReasonJobArrayTaskLimit})
			continue
		}
		pending = append(pending, queue.PendingJob{
			ID: id, Queue: sj.job.Spec.Queue, Owner: sj.job.Owner, Priority: sj.job.Spec.Priority, SubmittedAt: sj.job.SubmittedAt,
			TimeLimit: sj.job.Spec.TimeLimit.Duration(), Request: place.RequestForJob(sj.job),
		})
	}
	s.waits.apply(pending, seen)
	records := make([]queue.UsageRecord, 0, len(s.usage))
	for _, r := range s.usage {
		records = append(records, r)
	}
	usage := queue.DecayedUsage(records, now, queue.DefaultHalfLife)
	return queue.Input{
		Snapshot: snap, Pending: pending, Running: running, Config: s.cfg.Queues,
		Usage: s.finished.Usage(now, usage), Now: now,
	}, seen, holds
}

func runningJob(id string, j domain.Job, p domain.Placement, started time.Time) queue.RunningJob {
	return queue.RunningJob{ID: id, Queue: j.Spec.Queue, Owner: j.Owner, Placement: p, StartedAt: started, TimeLimit: j.Spec.TimeLimit.Duration()}
}

// startOf is when a gang started for time-limit purposes.
func startOf(j domain.Job, a domain.Allocation, now time.Time) time.Time {
	switch {
	case !j.RunningAt.IsZero():
		return j.RunningAt
	case !a.ReservedAt.IsZero():
		return a.ReservedAt
	}
	return now
}

func (s *scheduler) propose(ctx context.Context, sj seenJob, p domain.Placement, note string, now time.Time) {
	j := sj.job
	// The decision joins the job's trace; the proposal carries it to gang.
	ctx, span := telemetry.Continue(ctx, s.Tel.Tracer, j.TraceParent, telemetry.SpanPropose,
		append(telemetry.JobAttrs(j), telemetry.PlacementAttrs(p)...)...)
	defer span.End()
	ctx = telemetry.WithJob(ctx, j.ID)
	if j.Conflicts > 0 {
		span.SetAttributes(telemetry.AttrConflicts.Int(j.Conflicts))
		s.Tel.Metrics.Retries.Add(ctx, 1)
	}
	prop := domain.Proposal{JobID: j.ID, Attempt: j.Attempt, Placement: p, ProposedAt: now, JobRevision: sj.rev, Note: note}
	msgID := domain.ProposalMsgID(j.ID, j.Attempt, j.Conflicts)
	if err := s.Bus.PublishJSON(ctx, subjects.Reserve, msgID, prop); err != nil {
		s.Log.WarnContext(ctx, "proposal not sent", "job", j.ID, "err", err)
		return
	}
	s.mu.Lock()
	s.inflight[j.ID] = proposal{attempt: j.Attempt, conflicts: j.Conflicts, placement: p, deadline: now.Add(s.cfg.ProposalTimeout)}
	s.mu.Unlock()
}

// explain records why a job is still pending, when the reason changed, and
// reports whether it wrote the record, and at which revision.
func (s *scheduler) explain(ctx context.Context, sj seenJob, reason, detail string) (uint64, bool) {
	j := sj.job
	if j.Reason == reason && j.Detail == detail {
		return 0, false
	}
	_, rev, changed, err := s.Jobs.UpdateFrom(ctx, j, sj.rev, func(cur *domain.Job) (bool, error) {
		return cur.SetPendingReason(j.Attempt, reason, detail), nil
	})
	if err != nil {
		s.Log.Warn("pending reason not recorded", "job", j.ID, "err", err)
		return 0, false
	}
	return rev, changed
}
