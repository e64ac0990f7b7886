package queue

import (
	"cmp"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// reserve finds the earliest time j could start and where, assuming every
// running job (including those this plan started) ends at its expected
// end: on a copy of the free resources it releases running jobs in order
// of expected end and asks placement, at each candidate time, whether j
// fits. The candidate times are those ends and the deadlines of j's own
// topology waits (a wait running out can make j placeable without any
// release); a wait that has not started is taken to start at the first
// end at which j could be placed by relaxing its soft constraints (the
// caller starts it then, NextWaitSince). Whether j fits only grows with
// time (more released, waits nearer their end), so a binary search over
// the candidates finds the first. When even the last candidate fails,
// jobs without a time limit are released too: if j fits then, the
// reservation has an unknown start; if not (nodes down or drained), there
// is none.
func (pl *planner) reserve(j PendingJob) (*Reservation, bool) {
	now := pl.in.Now
	type ending struct {
		at  time.Time
		job RunningJob
	}
	var finite []ending
	var forever []RunningJob
	for _, r := range pl.running {
		if end, ok := r.ExpectedEnd(); ok {
			finite = append(finite, ending{at: later(end, now), job: r})
		} else {
			forever = append(forever, r)
		}
	}
	slices.SortFunc(finite, func(a, b ending) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.job.ID, b.job.ID))
	})
	// By ID: Input.Running comes from maps, and a reservation's detail
	// names the first of these, so that it reads the same every cycle.
	slices.SortFunc(forever, func(a, b RunningJob) int { return cmp.Compare(a.ID, b.ID) })
	future := newPlacer(pl.real.snap.Clone(), pl.in.Seed)
	released := 0
	moveTo := func(at time.Time) {
		target := 0
		for target < len(finite) && !finite[target].at.After(at) {
			target++
		}
		for ; released < target; released++ {
			future.release(finite[released].job.Placement)
		}
		for ; released > target; released-- {
			future.take(finite[released-1].job.Placement)
		}
	}
	// placeAt places j at time at, on what is free then minus what the
	// plan's reservations hold that j, started then, would overlap.
	placeAt := func(j PendingJob, at time.Time) place.Result {
		moveTo(at)
		return pl.without(future, pl.heldAt(j, at)).place(j, at)
	}
	waits := func() []string {
		ids := make([]string, released)
		for i := range released {
			ids[i] = finite[i].job.ID
		}
		return ids
	}
	// first is the index of the first of times at which j places. Within
	// a run of times with the same reservations in j's way, whether j fits
	// only grows with time (more released, waits nearer their end), so a
	// binary search finds the first; the runs are few (one per
	// reservation at most, as heldAt only grows with time).
	first := func(j PendingJob, times []time.Time) int {
		for lo := 0; lo < len(times); {
			mask := pl.heldAt(j, times[lo])
			end := lo
			for end < len(times) && pl.heldAt(j, times[end]) == mask {
				end++
			}
			a, b := lo, end
			for a < b {
				mid := (a + b) / 2
				if placeAt(j, times[mid]).Code == place.Placed {
					b = mid
				} else {
					a = mid + 1
				}
			}
			if a < end {
				return a
			}
			lo = end
		}
		return len(times)
	}
	ends := []time.Time{now}
	for _, e := range finite {
		ends = append(ends, e.at)
	}
	ends = slices.CompactFunc(ends, time.Time.Equal)
	t := j.Request.Topology
	soft := []time.Duration{t.WaitForSwitches, t.PreferredWait}
	// over is j with its topology waits over.
	over := j
	over.Request.WaitSince = now.Add(-max(soft[0], soft[1]))
	if j.Request.WaitSince.IsZero() && max(soft[0], soft[1]) > 0 {
		// The wait has not started: it starts at the first time j could
		// be placed by relaxing its soft constraints, and j may start
		// within them before it ends. Plan as if it starts then.
		if k := first(over, ends); k < len(ends) {
			j.Request.WaitSince = ends[k]
		}
	}
	times := slices.Clone(ends)
	for _, w := range soft {
		if d := j.Request.WaitEnd(w, now); w > 0 && !j.Request.WaitSince.IsZero() && d.After(now) {
			times = append(times, d)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	times = slices.CompactFunc(times, time.Time.Equal)

	if k := first(j, times); k < len(times) {
		r := placeAt(j, times[k])
		return &Reservation{JobID: j.ID, Start: times[k], Placement: *r.Placement, Waits: waits(), relaxed: r.Relaxed, leaves: r.Leaves}, true
	}
	last := times[len(times)-1]
	moveTo(last)
	ids := waits()
	for _, r := range forever {
		future.release(r.Placement)
		ids = append(ids, r.ID)
	}
	// When the start is unknown, it overlaps every reservation; and so is
	// when the wait would end unknown: assume it has.
	unknown := pl.without(future, 1<<len(pl.resv)-1)
	for _, c := range []PendingJob{j, over} {
		if r := unknown.place(c, last); r.Code == place.Placed {
			return &Reservation{JobID: j.ID, Placement: *r.Placement, Waits: ids, relaxed: r.Relaxed, leaves: r.Leaves}, true
		}
	}
	return nil, false
}

// heldAt is the set of the plan's reservations (a bit per entry of
// pl.resv) that j, started at at, would overlap: those that start before
// it ends, or whose start is unknown. A reservation held for a later job
// never counts on an earlier one's resources while that one may need them,
// so it cannot delay it.
func (pl *planner) heldAt(j PendingJob, at time.Time) uint64 {
	end, limited := endOf(j, at)
	return pl.overlapped(end, limited)
}

// without is p minus the placements of the reservations in mask, on a
// copy; p itself when mask is empty.
func (pl *planner) without(p *placer, mask uint64) *placer {
	if mask == 0 {
		return p
	}
	snap := p.snap.Clone()
	for i, r := range pl.resv {
		if mask&(1<<i) != 0 {
			snap.Take(r.Placement)
		}
	}
	return newPlacer(snap, p.seed)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
