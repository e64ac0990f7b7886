package queue

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// NextWaitSince is when a job's bounded topology wait started (its
// place.Request.WaitSince for the next plan), given when it had started
// before this plan (zero: not yet) and the plan's decision d for the job at
// now. The placement service and the simulator keep the clocks with it;
// plans only read them.
//
// It follows Slurm's --switches=N@max-time, whose wait4switch clock starts
// when the scheduler first evaluates the job's placement, not at
// submission: here the clock starts at the first decision that finds the
// job could start now, but only by relaxing a soft topology constraint
// (WaitingForSwitches, WaitingForTopology). A job that reaches the head of
// a queue of days therefore still waits up to its wait for a placement on
// few switches, and no longer. Once started the clock runs until the job
// starts, even while the job is blocked again for resources, so the wait
// stays bounded; a start resets it (a requeued job waits afresh).
func NextWaitSince(d Decision, since, now time.Time) time.Time {
	switch {
	case d.Action == Start:
		return time.Time{}
	case !since.IsZero():
		return since
	case d.ReasonCode == place.ReasonWaitingForSwitches, d.ReasonCode == place.ReasonWaitingForTopology:
		return now
	}
	return time.Time{}
}
