package queue

import "github.com/lockstep-dev/lockstep/shared/core/place"

// PlanFIFOSkip is the baseline policy the simulator compares against:
// plain priority, then submission order (no fair share), quotas and user
// limits as in PlanBackfill, and every job that fits the free resources
// starts, skipping those that do not; no reservations. Under a stream of small jobs a large
// gang behind them can wait forever, which is what PlanBackfill prevents.
func PlanFIFOSkip(in Input) Plan {
	real := newPlacer(in.Snapshot.Clone(), in.Seed)
	quotas := newQuotas(in.Config, in.Running)
	users := newUserGPUs(in.Config, in.Running)
	var plan Plan
	for _, j := range orderFIFO(in) {
		if d, over := quotas.check(j); over {
			plan.Decisions = append(plan.Decisions, d)
			continue
		}
		if d, over := users.check(j); over {
			plan.Decisions = append(plan.Decisions, d)
			continue
		}
		r := real.place(j, in.Now)
		if r.Code != place.Placed {
			plan.Decisions = append(plan.Decisions, fromResult(j, r))
			continue
		}
		p := *r.Placement
		real.take(p)
		quotas.add(j)
		users.add(j)
		plan.Decisions = append(plan.Decisions, Decision{
			JobID: j.ID, Queue: j.Queue, Action: Start, Placement: &p, Relaxed: r.Relaxed, Detail: r.Detail,
		})
	}
	return plan
}
