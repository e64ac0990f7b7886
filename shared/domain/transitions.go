package domain

import (
	"strconv"
	"time"
)

// The job state machine's transitions. Each is pure and reports whether it
// changed the job, so a handler that runs twice (redelivery) changes
// nothing the second time. Callers apply them through jobs.Store.Update.

// Reserve moves a pending attempt to reserved.
func (j *Job) Reserve(attempt int, p Placement, now time.Time) bool {
	if j.State != StatePending || j.Attempt != attempt {
		return false
	}
	j.State, j.Reason, j.Placement, j.ReservedAt = StateReserved, "", &p, now
	return true
}

// Run moves a reserved attempt to running.
func (j *Job) Run(attempt int, now time.Time) bool {
	if j.State != StateReserved || j.Attempt != attempt {
		return false
	}
	j.State, j.RunningAt = StateRunning, now
	return true
}

// Finish ends an attempt (or a pending job, for cancel) in a terminal state.
// attempt < 0 matches any attempt.
func (j *Job) Finish(attempt int, state State, reason string, exitCode *int, now time.Time) bool {
	if j.State.Terminal() || (attempt >= 0 && j.Attempt != attempt) {
		return false
	}
	j.State, j.Reason, j.ExitCode, j.EndedAt = state, reason, exitCode, now
	return true
}

// Requeue sends an active attempt back to pending as a new attempt, charging
// the restart budget. When the budget is spent the job fails instead.
// It returns whether the job changed and whether it failed.
func (j *Job) Requeue(attempt int, reason string, now time.Time) (changed, failed bool) {
	if !j.State.Active() || j.Attempt != attempt {
		return false, false
	}
	if j.Restarts >= j.Spec.MaxRestarts() {
		j.State, j.EndedAt = StateFailed, now
		j.Reason = reason + " (restart budget of " + strconv.Itoa(j.Spec.MaxRestarts()) + " spent)"
		return true, true
	}
	j.Restarts++
	j.Attempt++
	j.State, j.Reason, j.Placement, j.PendingSince = StatePending, reason, nil, now
	j.ReservedAt, j.RunningAt = time.Time{}, time.Time{}
	return true, false
}

// Conflict records a lost reservation race; the attempt stays pending.
func (j *Job) Conflict(attempt int, reason string) bool {
	if j.State != StatePending || j.Attempt != attempt {
		return false
	}
	j.Conflicts++
	j.Reason = ReasonConflict + ": " + reason
	return true
}

// SetPendingReason updates the explanation of a pending attempt.
func (j *Job) SetPendingReason(attempt int, reason string) bool {
	if j.State != StatePending || j.Attempt != attempt || j.Reason == reason {
		return false
	}
	j.Reason = reason
	return true
}
