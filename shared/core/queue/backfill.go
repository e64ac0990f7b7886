package queue

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// PlanBackfill is Lockstep's queue policy: priority with fair share
// (Order), GPU quotas, per-user GPU limits, and EASY backfill with one reservation. See doc.go.
// It is pure: it works on a clone of in.Snapshot and reads no clock.
func PlanBackfill(in Input) Plan {
	pl := newPlanner(in)
	for _, j := range Order(in) {
		pl.decide(j)
	}
	return pl.plan
}

// planner is one PlanBackfill run.
type planner struct {
	in   Input
	real *placer // the free resources now, as the plan takes them
	// shadows are real minus some of the plan's reservations (shadowFor),
	// by the set they subtract (a bit per entry of reservations()).
	shadows map[uint64]*placer
	// resv are the plan's reservation and its holds, in the order given.
	resv    []*Reservation
	quotas  *quotas
	users   *userGPUs
	running []RunningJob // input's, plus the jobs this plan starts
	plan    Plan
	// noReserve remembers shapes for which no reservation exists.
	noReserve map[memoKey]bool
	// fewest remembers fewestLeaves per request shape.
	fewest map[place.Request]int
}

func newPlanner(in Input) *planner {
	return &planner{
		in:        in,
		real:      newPlacer(in.Snapshot.Clone(), in.Seed),
		quotas:    newQuotas(in.Config, in.Running),
		users:     newUserGPUs(in.Config, in.Running),
		running:   append([]RunningJob(nil), in.Running...),
		noReserve: map[memoKey]bool{},
		fewest:    map[place.Request]int{},
		shadows:   map[uint64]*placer{},
	}
}

func (pl *planner) add(d Decision) { pl.plan.Decisions = append(pl.plan.Decisions, d) }

func (pl *planner) decide(j PendingJob) {
	now := pl.in.Now
	// Policy first: a job over its queue's quota or its owner's GPU limit
	// neither starts, nor backfills, nor holds the reservation.
	if d, over := pl.quotas.check(j); over {
		pl.add(d)
		return
	}
	if d, over := pl.users.check(j); over {
		pl.add(d)
		return
	}
	res := pl.plan.Reservation
	if res == nil {
		r := pl.real.place(j, now)
		switch {
		case r.Code == place.Placed && pl.spread(j, r.Relaxed, r.Leaves) && pl.waitsForCompact(j, now, *r.Placement):
		case r.Code == place.Placed:
			pl.start(j, r, "")
		case r.Code == place.Wait:
			if !pl.tryReserve(j, r) {
				pl.add(fromResult(j, r))
			}
		default:
			pl.add(fromResult(j, r))
		}
		return
	}
	// Behind the reservation: start only what cannot delay it, or the
	// switch-waiting gangs holding resources too (holds.go): a job may use
	// what a reservation holds only when it ends (by its time limit)
	// before that reservation's start; so it is placed on the free
	// resources minus every reservation it would overlap (a subset of the
	// free resources, so a fit there is a fit now).
	end, limited := endOf(j, now)
	mask := pl.overlapped(end, limited)
	if r := pl.shadowFor(mask).place(j, now); r.Code == place.Placed {
		if pl.waitsRatherThanSpread(j, r) {
			return
		}
		why := fmt.Sprintf("backfilled on resources %s does not use", pl.holders(mask))
		if mask == 0 {
			why = fmt.Sprintf("backfilled: ends by %s, before %s's reserved start ≈ %s", clock(end, now), res.JobID, clock(res.Start, now))
		}
		pl.start(j, r, why)
		return
	} else if mask == 0 {
		pl.waitOrHold(j, r)
		return
	}
	r := pl.real.probe(j, now)
	if r.Code != place.Placed {
		pl.waitOrHold(j, r)
		return
	}
	first := pl.resv[bits.TrailingZeros64(mask)]
	why := "it has no time limit"
	if limited {
		why = "it would run until " + clock(end, now)
	}
	pl.add(Decision{
		JobID: j.ID, Queue: j.Queue, Action: Pending, ReasonCode: ReasonPriority, Reason: ReasonPriority,
		Detail: fmt.Sprintf("fits now but would delay %s, reserved from %s: %s and needs resources the reservation holds",
			first.JobID, startPhrase(*first, now), why),
	})
}

// start records a Start and takes its resources from the plan's views.
func (pl *planner) start(j PendingJob, r place.Result, backfill string) {
	p := *r.Placement
	pl.real.take(p)
	for _, sh := range pl.shadows {
		sh.take(p)
	}
	pl.quotas.add(j)
	pl.users.add(j)
	pl.running = append(pl.running, RunningJob{
		ID: j.ID, Queue: j.Queue, Owner: j.Owner, Placement: p, StartedAt: pl.in.Now, TimeLimit: j.TimeLimit,
	})
	d := Decision{JobID: j.ID, Queue: j.Queue, Action: Start, Placement: &p, Relaxed: r.Relaxed, Detail: r.Detail}
	if backfill != "" {
		d.Backfilled = true
		d.Detail += "; " + backfill
	}
	pl.add(d)
}

// tryReserve gives j the plan's reservation if one exists for it.
func (pl *planner) tryReserve(j PendingJob, now place.Result) bool {
	k := keyOf(j.Request, pl.in.Now)
	if pl.noReserve[k] {
		return false
	}
	res, ok := pl.reserve(j)
	if !ok {
		pl.noReserve[k] = true
		return false
	}
	if pl.spread(j, res.relaxed, res.leaves) && res.Known() && pl.waitsForCompact(j, res.Start, res.Placement) {
		return true
	}
	if pl.plan.Reservation != nil && (!res.Known() || pl.spread(j, res.relaxed, res.leaves)) {
		// A hold is for the leaves a gang waits for: one that would start
		// spread anyway, or at an unknown time, holds nothing.
		return false
	}
	pl.hold(res)
	detail := fmt.Sprintf("%s; reserved %s from %s", now.Detail, summary(res.Placement), startPhrase(*res, pl.in.Now))
	switch len(res.Waits) {
	case 0:
	case 1:
		detail += ", when " + res.Waits[0] + " ends"
	default:
		detail += ", when " + listIDs(res.Waits, 3) + " end"
	}
	code, reason := ReasonReserved, fmt.Sprintf("%s (starts ≈ %s)", ReasonReserved, clock(res.Start, pl.in.Now))
	if !res.Known() {
		reason = ReasonReserved + " (start unknown)"
	}
	if now.ReasonCode == place.ReasonWaitingForSwitches || now.ReasonCode == place.ReasonWaitingForTopology {
		// It could run now but waits by its own choice: that is the reason
		// to show; the reservation only keeps others from taking its place.
		code, reason = now.ReasonCode, now.Reason
	}
	pl.add(Decision{JobID: j.ID, Queue: j.Queue, Action: Pending, ReasonCode: code, Reason: reason, Detail: detail})
	return true
}

func fromResult(j PendingJob, r place.Result) Decision {
	return pending(j, r.ReasonCode, r.Reason, r.Detail)
}

func pending(j PendingJob, code, reason, detail string) Decision {
	return Decision{JobID: j.ID, Queue: j.Queue, Action: Pending, ReasonCode: code, Reason: reason, Detail: detail}
}

// endOf is when j would end if started now; false without a time limit.
func endOf(j PendingJob, now time.Time) (time.Time, bool) {
	if j.TimeLimit <= 0 {
		return time.Time{}, false
	}
	return now.Add(j.TimeLimit), true
}

func summary(p domain.Placement) string {
	nodes := "nodes"
	if len(p.Nodes) == 1 {
		nodes = "node"
	}
	return fmt.Sprintf("%d GPUs on %d %s", p.GPUCount(), len(p.Nodes), nodes)
}
