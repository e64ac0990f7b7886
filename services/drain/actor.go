package drain

import (
	"context"
	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// actorOf reads who sent a cancel or drain request from its subject, never
// from its body: on a cluster with auth the server lets only bob (or an
// admin) publish on CancelAs("bob"). The shared subject has no actor ("");
// once auth is on only services and admins may publish there, and without
// auth anyone may, as before.
func actorOf(base, subject string) (string, error) {
	actor, ok := subjects.UserOf(base, subject)
	switch {
	case !ok:
		return "", errs.MarkPermanent(errors.Newf("request on %q, not on %s", subject, base))
	case actor != "" && !domain.ValidUserName(actor):
		return "", errs.MarkPermanent(errors.Newf("request subject %q names no valid user", subject))
	}
	return actor, nil
}

// authorize reads who sent msg, a request on base (or base.<user>), and
// the job it is about, and checks that they may ask for it (refusal, with
// kind for a drain). ok is false when the handler is done: err is then
// what it returns — nil once a refusal is published, the error to retry
// a job not admitted yet (retryUnknown), or a fault. request names the
// request in a refusal.
func (s *service) authorize(ctx context.Context, msg jetstream.Msg, base, jobID, request string, kind domain.DrainKind) (actor string, ok bool, err error) {
	actor, err = actorOf(base, msg.Subject())
	if err != nil {
		return "", false, err
	}
	// The owner never changes, so the record read here settles who may.
	job, _, err := s.Jobs.Get(ctx, jobID)
	if errs.IsNotFound(err) {
		return "", false, retryUnknown(msg, err)
	}
	if err != nil {
		return "", false, err
	}
	if why := s.refusal(job, actor, kind); why != "" {
		return "", false, s.refuse(ctx, job, actor, request, why)
	}
	return actor, true, nil
}

// refusal says why actor may not act on job, or "" when they may: the
// owner may, and so may the policy's admins and operators and a request
// on the shared subject. Everyone else is refused, including on a job
// without an owner (one submitted on the shared subject). Only Lockstep
// and the privileged may ask for the drains Lockstep starts itself.
func (s *service) refusal(job domain.Job, actor string, kind domain.DrainKind) string {
	if actor == "" || s.cfg.Queues.Privileged(actor) {
		return ""
	}
	if job.Owner != actor {
		if job.Owner == "" {
			return fmt.Sprintf("job %s belongs to no user: only an admin or operator may act on it", job.ID)
		}
		return fmt.Sprintf("job %s belongs to %s", job.ID, job.Owner)
	}
	if kind != "" && kind != domain.DrainCancel && kind != domain.DrainCheckpoint {
		return fmt.Sprintf("a %s drain is for Lockstep, admins and operators: ask for cancel or checkpoint", kind)
	}
	return ""
}

// refuse records a request that changed nothing, on the job's subject, for
// the owner and the audit trail: the actor and why.
func (s *service) refuse(ctx context.Context, job domain.Job, actor, request, reason string) error {
	s.Log.WarnContext(ctx, "refused request", "job", job.ID, "request", request, "actor", actor, "owner", job.Owner, "reason", reason)
	ev := events.ForJob(events.Refused, job, s.cfg.Now().UTC())
	ev.Actor, ev.Reason = actor, request+" refused: "+reason
	return s.Bus.PublishEvent(ctx, ev)
}

// requestActor is the actor a drain names: the requester, or Lockstep
// itself for the drains it starts on the shared subject (placement's
// preemptions).
func requestActor(actor string, kind domain.DrainKind) string {
	if actor == "" && kind == domain.DrainPreempt {
		return events.SystemActor("placement")
	}
	return actor
}

// decoded adapts the handler of one request type to the consumer: the
// message is decoded first, and one that does not decode is the decoder's
// error (permanent: the consumer terminates it with the fields named).
func decoded[R any](decode func([]byte) (R, error), handle func(context.Context, jetstream.Msg, R) error) bus.Handler {
	return func(ctx context.Context, msg jetstream.Msg) error {
		req, err := decode(msg.Data())
		if err != nil {
			return err
		}
		return handle(ctx, msg, req)
	}
}
