package placement

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/preempt"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// preemption is a preemptor's outstanding request: the victims asked to
// drain for it, and until when the request stands.
type preemption struct {
	victims []string
	until   time.Time
}

// preempt looks at the highest-priority pending job that waits for
// resources and, if evicting lower-priority running gangs would let it
// start, asks the drain service to checkpoint-drain them. One preemptor at
// a time; while its victims drain it waits and nothing else is evicted
// for it.
func (s *scheduler) preempt(ctx context.Context, in queue.Input, plan queue.Plan, seen jobsSeen, now time.Time) {
	s.mu.Lock()
	for id, p := range s.preempting {
		sj, ok := seen.get(id)
		if !ok || sj.job.State != domain.StatePending || now.After(p.until) {
			delete(s.preempting, id)
		}
	}
	busy := len(s.preempting) > 0
	s.mu.Unlock()
	if busy {
		return
	}
	// The preemptor is chosen within the policy: a job its queue's quota
	// or its owner's GPU limit would hold back never evicts anyone.
	p, found := queue.Preemptor(in, plan)
	if !found {
		return
	}
	sj, ok := seen.get(p.ID)
	if !ok {
		return
	}
	top := &sj.job
	// Judge on what is left once this cycle's starts take their share.
	snap := in.Snapshot.Clone()
	for _, d := range plan.Starts() {
		snap.Take(*d.Placement)
	}
	// Gangs already draining free their GPUs soon: a preemption this
	// leader does not remember (it took over meanwhile, or the drain ran
	// past the request's time), a cancel, a time limit. Counted free, and
	// if that is room enough nobody more is evicted.
	req, seed := requestOf(in, *top), seedFor(top.ID, top.Attempt)
	draining := false
	allocs := s.allocs.Snapshot() // one view for the draining and the candidates
	for _, a := range allocs {
		if sj, ok := seen.get(a.JobID); ok && sj.job.Drain != nil && sj.job.Attempt == a.Attempt {
			snap.Release(a.Placement)
			draining = true
		}
	}
	if draining && place.Place(snap.Clone(), req, now, seed).Code == place.Placed {
		return
	}
	cands := candidates(allocs, seen, now)
	choice, ok := preempt.Choose(snap, req, top.Spec.Priority, cands, now, seed)
	if !ok {
		return
	}
	grace := time.Duration(0)
	for _, v := range choice.Victims {
		victim, _ := seen.get(v)
		grace = max(grace, victim.job.Spec.Grace())
		req := domain.DrainRequest{JobID: v, Kind: domain.DrainPreempt, Then: domain.ThenRequeue,
			Reason: fmt.Sprintf("preempted by %s (priority %d)", top.ID, top.Spec.Priority)}
		msgID := domain.PreemptMsgID(v, victim.job.Attempt, top.ID)
		// The request joins the victim's trace, linked to the preemptor's.
		vctx, span := telemetry.Continue(ctx, s.Tel.Tracer, victim.job.TraceParent, "placement.preempt",
			telemetry.AttrJobID.String(v), telemetry.AttrReason.String(req.Reason))
		span.AddLink(trace.Link{SpanContext: telemetry.SpanContextOf(top.TraceParent)})
		err := s.Bus.PublishJSON(vctx, subjects.Drain, msgID, req)
		telemetry.End(span, err)
		if err != nil {
			s.Log.WarnContext(vctx, "preemption not requested", "victim", v, "err", err)
			return
		}
	}
	s.Log.Info("preempting", "for", top.ID, "victims", choice.Victims, "lostWork", choice.LostWork)
	s.mu.Lock()
	s.preempting[top.ID] = preemption{victims: choice.Victims, until: now.Add(grace + 30*time.Second)}
	s.mu.Unlock()
}

// candidates are the running gangs (every rank started, no drain under
// way), with the work each would lose.
func candidates(allocs map[string]store.Holding, seen jobsSeen, now time.Time) []preempt.Candidate {
	var out []preempt.Candidate
	for _, a := range allocs {
		sj, ok := seen.get(a.JobID)
		if !ok || a.State != domain.AllocRunning || sj.job.State != domain.StateRunning ||
			sj.job.Drain != nil || sj.job.Attempt != a.Attempt {
			continue
		}
		since := sj.job.RunningAt
		if c := sj.job.LastCheckpoint; c != nil && c.Attempt == sj.job.Attempt && c.At.After(since) {
			since = c.At
		}
		out = append(out, preempt.Candidate{ID: a.JobID, Priority: sj.job.Spec.Priority, Placement: a.Placement, LostWork: now.Sub(since)})
	}
	return out
}
