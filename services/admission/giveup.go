package admission

import (
	"context"
	"fmt"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// giveUp rejects a submission the bus stopped retrying: admission failed
// on every delivery (or never answered one). "Admitted or rejected, never
// lost": the submitter gets a rejected event naming the reason rather
// than silence. A submission that made it in after all (a delivery that
// succeeded late) keeps its record and gets no event.
func (a *admitter) giveUp(ctx context.Context, u bus.Undeliverable) error {
	msgID := u.Header.Get(subjects.HeaderMsgID)
	spec, err := jobspec.Parse(u.Data)
	specID := spec.ID
	if err != nil {
		spec, specID = jobspec.Spec{}, claimedID(u.Data)
	}
	id := jobspec.DeriveID(specID, msgID, u.StreamSeq)
	reason := fmt.Sprintf("internal: not admitted after %d deliveries (%s): %v", u.Deliveries, u.Reason, u.Err)
	owner, ownerErr := ownerOf(u.Subject)
	if ownerErr != nil {
		reason += "; " + ownerErr.Error()
	}
	sub := submission{id: id, msgID: msgID, owner: owner, submitted: u.Timestamp}
	task, begun, beginErr := a.expansionBegun(ctx, sub, spec)
	if begun {
		// An array's own ID never has a record: a rejected one written
		// there now would stand for the array in cancel, dependencies and
		// describe while its tasks run. They keep running; the rest of
		// the array is not written.
		a.Log.WarnContext(ctx, "gave up on an array whose expansion had begun; its written tasks stand", "job", id, "msgId", msgID, "task", task)
		return nil
	}
	existing, _, err := a.Jobs.Get(ctx, id)
	if beginErr != nil {
		err = beginErr // whether the array's expansion began is unknown
	}
	switch {
	case err == nil && existing.State != domain.StateRejected:
		a.Log.WarnContext(ctx, "gave up on a submission whose job exists", "job", id, "msgId", msgID, "state", existing.State)
		return nil
	case err != nil && !errs.IsNotFound(err):
		// The record is unreadable, so no owner can be compared: still
		// tell the submitter, without touching the record.
		a.Log.WarnContext(ctx, "gave up on a submission; its job record is unreadable", "job", id, "err", err)
		spec.ID = id
		ev := events.ForJob(events.Rejected, domain.Job{ID: id, Spec: spec}, a.now())
		ev.Reason, ev.MsgID, ev.Actor = reason, msgID, owner
		return a.Bus.PublishEvent(ctx, ev)
	}
	return a.reject(ctx, sub, spec, telemetry.RejectInternal, reason, a.now())
}

// expansionBegun reports whether this submission (sub) of array spec
// wrote its first task (tasks are written in index order), and names it.
// A task record that cannot be read is an error: not knowing is not "no".
func (a *admitter) expansionBegun(ctx context.Context, sub submission, spec jobspec.Spec) (string, bool, error) {
	if spec.Array == nil {
		return "", false, nil
	}
	indexes, err := spec.Array.Tasks()
	if err != nil || len(indexes) == 0 {
		return "", false, nil
	}
	task := jobspec.TaskID(sub.id, indexes[0])
	existing, _, err := a.Jobs.Get(ctx, task)
	switch {
	case errs.IsNotFound(err):
		return task, false, nil
	case err != nil:
		return task, false, errors.Wrapf(err, "read array %s's first task %s", sub.id, task)
	}
	return task, existing.Owner == sub.owner && sub.redeliveryOf(existing), nil
}
