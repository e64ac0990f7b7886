package lifecycle

import (
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
)

// DrainCompletion is how a drain ends, decided from its record: the job
// record's transition (End) and the events that announce it (Events).
type DrainCompletion struct {
	Record domain.DrainRecord
	// Why is why the drain ends now ("ranks exited", "grace period of …
	// expired; ranks killed", …).
	Why string
	Now time.Time
	// Checkpoint is where the next attempt resumes: the checkpoint every
	// expected rank acknowledged; nil unless all of them did.
	Checkpoint *domain.CheckpointRef
}

// CompleteDrain decides how the drain of rec ends, now, for why.
func CompleteDrain(rec domain.DrainRecord, why string, now time.Time) DrainCompletion {
	c := DrainCompletion{Record: rec, Why: why, Now: now}
	if rec.Acked() {
		c.Checkpoint = rec.Latest()
	}
	return c
}

// End ends the drain on the job record j (a mutator for a compare-and-set
// update: it depends only on c and j, so a retry on a fresh copy does the
// same). It returns j as the drain found it, for Events, and whether j
// changed: not when the attempt drained is over.
func (c DrainCompletion) End(j *domain.Job) (before domain.Job, changed bool) {
	if j.Drain == nil && j.State.Active() && j.Attempt == c.Record.Attempt {
		// A drain service older than the job-record-first order wrote
		// the drain record, not yet the job's.
		d := c.Record.Drain
		j.Drain = &d
	}
	before = *j
	return before, j.EndDrain(c.Record.Attempt, c.Checkpoint, c.Reason(before), c.Now)
}

// Reason is what the job record and the final event say: the drain's
// reason and why it ended, and, for a requeue with no new checkpoint, the
// earlier one the next attempt resumes from; within MaxReasonBytes.
func (c DrainCompletion) Reason(before domain.Job) string {
	d := c.drain(before)
	reason := d.Reason + ": " + c.Why
	if c.Checkpoint == nil && before.LastCheckpoint != nil && d.Then == domain.ThenRequeue {
		reason += fmt.Sprintf("; resuming from the last good checkpoint (step %d)", before.LastCheckpoint.Step)
	}
	// The drain's reason may already be at the bound (a node's, a cancel's
	// joined to it): the event that carries this must stay readable.
	return domain.BoundReason(reason)
}

// finalEvent is the event that ends a drain, by what the drain was for.
var finalEvent = map[domain.DrainThen]events.Type{
	domain.ThenRequeue: events.Requeued, domain.ThenCancel: events.Cancelled, domain.ThenTimeout: events.Timeout,
}

// Events announces a completion that changed the job record from before to
// after, in publishing order: checkpointed (on the attempt drained) when
// every expected rank acknowledged, then requeued, cancelled or timeout.
func (c DrainCompletion) Events(before, after domain.Job) []events.Event {
	var out []events.Event
	if c.Checkpoint != nil {
		ev := events.ForJob(events.Checkpointed, before, c.Now)
		ev.Checkpoint = c.Checkpoint
		out = append(out, ev)
	}
	d := c.drain(before)
	ev := events.ForJob(finalEvent[d.Then], after, c.Now)
	ev.Attempt, ev.Reason, ev.Timing, ev.Checkpoint = c.Record.Attempt, c.Reason(before), &after.Timing, after.LastCheckpoint
	ev.Actor = d.Actor
	return append(out, ev)
}

// drain is the drain as the job record had it when it ended: a cancel
// that upgraded it after the drain record was read is there, and it is
// what EndDrain applied.
func (c DrainCompletion) drain(before domain.Job) domain.Drain {
	if before.Drain != nil {
		return *before.Drain
	}
	return c.Record.Drain
}
