package queue

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// Topology-aware EASY backfill. The plan's reservation goes to the first
// job that cannot start; behind it, a gang that could start now but waits
// by its own choice for few switches (WaitingForSwitches, or a compact
// placement the stretch model prefers) would otherwise hold nothing, and
// smaller jobs would keep refilling the leaf it waits for: with
// maxSwitches 1 big gangs started later than without it. Such a gang gets
// a hold too: a reservation on the leaves that free soonest (reserve),
// computed without what earlier reservations hold, and later jobs backfill
// only where they delay none (overlapped, shadowFor). Holds are bounded,
// since each narrows backfill for every job after it: on the Philly
// replay, 4 holds per plan put fewer gangs on their fewest leaves than 1
// (52.3 % against 56.6 %) for a mean delay 0.2 d lower; the burst stream
// was the same or better with 1 (docs/benchmarks.md).
const maxHolds = 1

// hold gives res to its job: the plan's reservation when it has none yet,
// else one of its holds. From now on only what cannot delay it starts.
func (pl *planner) hold(res *Reservation) {
	if pl.plan.Reservation == nil {
		pl.plan.Reservation = res
	} else {
		pl.plan.Holds = append(pl.plan.Holds, *res)
	}
	pl.resv = append(pl.resv, res)
}

// mayHold reports whether another hold is allowed.
func (pl *planner) mayHold() bool { return len(pl.resv) <= maxHolds }

// overlapped is the set (a bit per entry of pl.resv) of the reservations
// a job ending at end (never, without limit) must keep clear of: those
// that start before it ends, or whose start is unknown.
func (pl *planner) overlapped(end time.Time, limited bool) uint64 {
	var mask uint64
	for i, r := range pl.resv {
		if !limited || !r.Known() || end.After(r.Start) {
			mask |= 1 << i
		}
	}
	return mask
}

// shadowFor is the free resources now minus the reservations in mask.
func (pl *planner) shadowFor(mask uint64) *placer {
	if mask == 0 {
		return pl.real
	}
	if sh, ok := pl.shadows[mask]; ok {
		return sh
	}
	sh := pl.without(pl.real, mask)
	pl.shadows[mask] = sh
	return sh
}

// holders names the reservations in mask, for a backfill's detail.
func (pl *planner) holders(mask uint64) string {
	var ids []string
	for i, r := range pl.resv {
		if mask&(1<<i) != 0 {
			ids = append(ids, r.JobID)
		}
	}
	if len(ids) == 1 {
		return ids[0] + "'s reservation"
	}
	return "the reservations of " + listIDs(ids, 3)
}

// waitOrHold records that j, behind the reservation, does not start for
// r's reason; a gang waiting by choice for its switches gets a hold.
func (pl *planner) waitOrHold(j PendingJob, r place.Result) {
	byChoice := r.ReasonCode == place.ReasonWaitingForSwitches || r.ReasonCode == place.ReasonWaitingForTopology
	if byChoice && pl.mayHold() && pl.tryReserve(j, r) {
		return
	}
	pl.add(fromResult(j, r))
}
