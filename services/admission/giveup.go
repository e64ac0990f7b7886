package admission

import (
	"context"
	"fmt"

	"github.com/lockstep-dev/lockstep/shared/bus"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/errs"
	"github.com/lockstep-dev/lockstep/shared/jobspec"
	"github.com/lockstep-dev/lockstep/shared/subjects"
	"github.com/lockstep-dev/lockstep/shared/telemetry"
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
	existing, _, err := a.jobs.Get(ctx, id)
	switch {
	case err == nil && existing.State != domain.StateRejected:
		a.log.WarnContext(ctx, "gave up on a submission whose job exists", "job", id, "msgId", msgID, "state", existing.State)
		return nil
	case err != nil && !errs.IsNotFound(err):
		// The record is unreadable: still tell the submitter.
		a.log.WarnContext(ctx, "gave up on a submission; its job record is unreadable", "job", id, "err", err)
	}
	reason := fmt.Sprintf("internal: not admitted after %d deliveries (%s): %v", u.Deliveries, u.Reason, u.Err)
	return a.reject(ctx, id, msgID, spec, telemetry.RejectInternal, reason, u.Timestamp, a.now())
}
