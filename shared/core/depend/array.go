package depend

import (
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// ArrayJob is how a dependency on an array's ID sees the array: one job
// standing for all its tasks, as in Slurm. It has ended once every task
// has, succeeded only if every task did (else it ended as the first task
// that did not); it is running once every task has started, and pending
// before. tasks must not be empty; their owner is the array's (one
// submission made them all).
func ArrayJob(id string, tasks []Job) Job {
	out := Job{ID: id, Owner: tasks[0].Owner, State: domain.StateSucceeded, SubmittedAt: tasks[0].SubmittedAt}
	var ended domain.State
	started := true
	for _, t := range tasks {
		if t.SubmittedAt.Before(out.SubmittedAt) {
			out.SubmittedAt = t.SubmittedAt
		}
		switch {
		case !t.State.Terminal():
			out.State = ""
			if t.State != domain.StateRunning {
				started = false
			}
		case t.State != domain.StateSucceeded && ended == "":
			ended = t.State
		}
	}
	switch {
	case out.State == "" && started:
		out.State = domain.StateRunning
	case out.State == "":
		out.State = domain.StatePending
	case ended != "":
		out.State = ended
	}
	return out
}
