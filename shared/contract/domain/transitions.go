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
	j.State, j.Reason, j.Detail, j.Placement, j.ReservedAt = StateReserved, "", "", &p, now
	j.Timing.GangWait = nonNegative(now.Sub(j.PendingSince))
	return true
}

// Run moves a reserved attempt to running. pull is the attempt's pull
// phase (nil: none): η counts it as its own term, not as scheduling.
func (j *Job) Run(attempt int, now time.Time, pull *PullSummary) bool {
	if j.State != StateReserved || j.Attempt != attempt {
		return false
	}
	j.State, j.RunningAt = StateRunning, now
	waited := nonNegative(now.Sub(j.PendingSince))
	if pull != nil {
		took := min(pull.Took, waited)
		j.Timing.Pull += took
		waited -= took
		p := *pull
		j.Pull = &p
	}
	j.Timing.SchedLatency += waited
	return true
}

// stopClock closes the running interval of the current attempt: compute
// up to the drain request (or now), and the drain itself.
func (j *Job) stopClock(now time.Time) {
	if j.State != StateRunning || j.RunningAt.IsZero() {
		return
	}
	computeEnd := now
	if j.Drain != nil {
		computeEnd = j.Drain.RequestedAt
		d := nonNegative(now.Sub(j.Drain.RequestedAt))
		j.Timing.Drain += d
		j.Timing.LastDrain = d
	}
	j.Timing.Compute += nonNegative(computeEnd.Sub(j.RunningAt))
}

func nonNegative(d time.Duration) time.Duration { return max(d, 0) }

// ThenCancelReason is a drain's reason once a cancel joins it, within
// MaxReasonBytes: the same on the job record and the drain record.
func ThenCancelReason(drain, cancel string) string {
	return BoundReason(drain + "; then " + cancel)
}

// StartDrain records a drain request on an active attempt. A second request
// while one is in progress changes nothing, except that a cancel wins over
// a requeue or a timeout (the job will not come back).
func (j *Job) StartDrain(attempt int, d Drain) bool {
	if !j.State.Active() || j.Attempt != attempt {
		return false
	}
	if j.Drain != nil {
		if d.Then == ThenCancel && j.Drain.Then != ThenCancel {
			j.Drain.Then, j.Drain.Reason = ThenCancel, ThenCancelReason(j.Drain.Reason, d.Reason)
			if d.Actor != "" {
				j.Drain.Actor = d.Actor
			}
			return true
		}
		return false
	}
	j.Drain = &d
	return true
}

// EndDrain completes a drain: the resources are released; the job is
// requeued (charging no restart: nothing failed), cancelled or timed out.
// ckpt, when not nil, is the checkpoint the drain produced.
func (j *Job) EndDrain(attempt int, ckpt *CheckpointRef, reason string, now time.Time) bool {
	if j.Drain == nil || j.Attempt != attempt || !j.State.Active() {
		return false
	}
	j.stopClock(now)
	if ckpt != nil {
		j.LastCheckpoint = ckpt
	}
	then := j.Drain.Then
	j.Drain = nil
	switch then {
	case ThenRequeue:
		j.Attempt++
		j.State, j.Reason, j.Placement, j.PendingSince = StatePending, reason, nil, now
		j.ReservedAt, j.RunningAt = time.Time{}, time.Time{}
	case ThenCancel:
		j.State, j.Reason, j.EndedAt = StateCancelled, reason, now
	case ThenTimeout:
		j.State, j.Reason, j.EndedAt = StateTimeout, reason, now
	}
	return true
}

// Finish ends an attempt (or a pending job, for cancel) in a terminal state.
// attempt < 0 matches any attempt.
func (j *Job) Finish(attempt int, state State, reason string, exitCode *int, now time.Time) bool {
	if j.State.Terminal() || (attempt >= 0 && j.Attempt != attempt) {
		return false
	}
	j.stopClock(now)
	j.State, j.Reason, j.ExitCode, j.EndedAt, j.Drain = state, reason, exitCode, now, nil
	return true
}

// Requeue sends an active attempt back to pending as a new attempt, charging
// the restart budget. When the budget is spent the job fails instead.
// It returns whether the job changed and whether it failed.
func (j *Job) Requeue(attempt int, reason string, now time.Time) (changed, failed bool) {
	if !j.State.Active() || j.Attempt != attempt {
		return false, false
	}
	j.stopClock(now)
	j.Drain = nil
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
func (j *Job) SetPendingReason(attempt int, reason, detail string) bool {
	if j.State != StatePending || j.Attempt != attempt || (j.Reason == reason && j.Detail == detail) {
		return false
	}
	j.Reason, j.Detail = reason, detail
	return true
}
