package events

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// MaxEventBytes bounds one encoded event.
const MaxEventBytes = 1 << 20

// Decode checks an encoded event against schemas/event.v1.json and the
// rules the schema cannot say, then decodes it. Anyone allowed on the bus
// can publish an event, so a reader treats one as a claim to check, never
// as the record: a client that acts on an event (submit --wait) confirms
// it against the job record. The error is a *domain.MessageError naming
// the fields at fault, marked errs.ErrPermanent.
func Decode(data []byte) (Event, error) {
	if len(data) > MaxEventBytes {
		return Event{}, domain.Malformed("event", validate.Errorf("", "%d bytes, more than the %d allowed", len(data), MaxEventBytes))
	}
	fes, err := schemaCheck(data)
	if err != nil {
		return Event{}, errors.Wrap(err, "load event schema")
	}
	if fes != nil {
		return Event{}, domain.Malformed("event", fes...)
	}
	var ev Event
	if err := codec.Decode(data, &ev); err != nil {
		return Event{}, domain.Malformed("event", domain.DecodeFieldError(err))
	}
	if fes := ev.check(); fes != nil {
		return Event{}, domain.Malformed("event", fes...)
	}
	return ev, nil
}

// DecodeFrom decodes an event read from subject and checks that it is the
// event that subject carries: an event about job a published on job b's
// subject is forged.
func DecodeFrom(subject string, data []byte) (Event, error) {
	ev, err := Decode(data)
	if err != nil {
		return Event{}, err
	}
	if want := ev.Subject(); want != subject {
		return Event{}, domain.Malformed("event", validate.Errorf("", "read on %q but its subject is %q", subject, want))
	}
	return ev, nil
}

// check holds the rules the schema cannot say: IDs and names well formed
// (they become subjects and are printed on terminals), a time, bounded
// text, a placement of sound shape.
func (e Event) check() []validate.FieldError {
	var out []validate.FieldError
	fail := func(field, format string, args ...any) {
		out = append(out, validate.Errorf(field, format, args...))
	}
	if !e.IsNodeEvent() && !jobspec.ValidID(e.JobID) {
		fail("jobId", "not a job ID")
	}
	if (e.IsNodeEvent() || e.Node != "") && !domain.ValidNodeName(e.Node) {
		fail("node", "not a node name")
	}
	if e.Time.IsZero() {
		fail("time", "required")
	}
	for _, t := range []struct{ field, value string }{
		{"reason", e.Reason}, {"msgId", e.MsgID}, {"signal", e.Signal},
	} {
		if len(t.value) > domain.MaxReasonBytes {
			fail(t.field, "%d bytes, more than the %d allowed", len(t.value), domain.MaxReasonBytes)
		}
	}
	if e.Queue != "" && !jobspec.ValidBaseID(e.Queue) {
		fail("queue", "not a queue name")
	}
	if e.Owner != "" && !domain.ValidUserName(e.Owner) {
		fail("owner", "not a user name")
	}
	if e.Actor != "" && !validActor(e.Actor) {
		fail("actor", "not a user name or lockstep:<service>")
	}
	// Counts the schema also bounds below, said here too: accounting
	// multiplies nodes by GPUs, and the client build reads events without
	// the schema.
	for _, n := range []struct {
		field string
		value int
	}{{"attempt", e.Attempt}, {"restarts", e.Restarts}, {"nodes", e.Nodes}, {"gpusPerNode", e.GPUsPerNode}} {
		if n.value < 0 {
			fail(n.field, "%d is negative", n.value)
		}
	}
	if e.Rank != nil && *e.Rank < 0 {
		fail("rank", "%d is negative", *e.Rank)
	}
	if len(e.Conflicts) > 1024 {
		fail("conflicts", "%d entries, more than 1024", len(e.Conflicts))
	}
	if len(e.GPUs) > domain.MaxGPUIndex+1 {
		fail("gpus", "%d entries, more than %d", len(e.GPUs), domain.MaxGPUIndex+1)
	}
	for i, g := range e.GPUs {
		if g < 0 || g > domain.MaxGPUIndex {
			fail(fmt.Sprintf("gpus.%d", i), "GPU %d is not between 0 and %d", g, domain.MaxGPUIndex)
		}
	}
	if e.Placement != nil {
		out = append(out, domain.CheckPlacement("placement", *e.Placement)...)
	}
	return out
}

// validActor is a user name or "lockstep:<service>" (Lockstep itself).
func validActor(a string) bool {
	if svc, ok := strings.CutPrefix(a, SystemActorPrefix); ok {
		return domain.ValidUserName(svc)
	}
	return domain.ValidUserName(a)
}
