package admission

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

type admitter struct {
	// Log, Tel, Bus, Etcd and Jobs, as config.Start made them.
	*config.Started
	inventory *store.Cache[domain.Node]
	queues    queue.Config
	now       func() time.Time
	// empty is the inventory as an empty cluster, for fitsCluster.
	empty emptyCluster
	// pending counts owners' pending jobs for the policy's limits.
	pending pending
}

// emptyCluster caches the whole inventory, up and empty, with the placement
// index Place builds on it: rebuilding both for every submission cost ≈ 2 ms
// of CPU per job on 1,000 nodes, most of admission's time under load. It
// also remembers the answer for each request, whatever the job's ID
// (place.Feasibility). Both are made anew when the inventory changes; the
// mutex also serializes Place, which fills the snapshot's index on first
// use.
type emptyCluster struct {
	mu   sync.Mutex
	gen  uint64
	fits *place.Feasibility
}

// handle admits or rejects one submission. Every path is idempotent: a
// redelivered message re-creates nothing and re-emits the same event ID.
func (a *admitter) handle(ctx context.Context, msg jetstream.Msg) error {
	md, err := msg.Metadata()
	if err != nil {
		return errors.Wrap(err, "submission metadata")
	}
	sub := submission{msgID: msg.Headers().Get(subjects.HeaderMsgID), submitted: md.Timestamp}
	now := a.now()
	if md.NumDelivered == 1 {
		a.Tel.Metrics.Submissions.Add(ctx, 1)
	}
	owner, ownerErr := ownerOf(msg.Subject())
	sub.owner = owner

	spec, err := jobspec.Parse(msg.Data())
	if err != nil {
		if !errs.IsInvalid(err) {
			return err
		}
		sub.id = jobspec.DeriveID(claimedID(msg.Data()), sub.msgID, md.Sequence.Stream)
		return a.reject(ctx, sub, spec, telemetry.RejectInvalid, err.Error(), now)
	}
	sub.id = jobspec.DeriveID(spec.ID, sub.msgID, md.Sequence.Stream)
	spec.ID = sub.id
	spec = spec.WithDefaults() // the name defaults to the ID, known only now
	ctx = telemetry.WithJob(ctx, sub.id)
	if ownerErr != nil {
		return a.reject(ctx, sub, spec, telemetry.RejectInvalid, ownerErr.Error(), now)
	}
	// The job's trace is this span's (the submitter's, when it sent a
	// traceparent): every service continues it from the record.
	job := domain.Job{
		ID: sub.id, Spec: spec, State: domain.StatePending, Attempt: 1, MsgID: sub.msgID,
		SubmittedAt: sub.submitted, PendingSince: now,
		TraceID: telemetry.TraceID(ctx), TraceParent: telemetry.TraceParent(ctx),
		Owner: sub.owner,
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(telemetry.JobAttrs(job)...)
	}
	// A redelivered array whose first delivery began writing its tasks was
	// admitted: the tasks written are the verdict, whatever the checks
	// below would say now (a dependency failed since, the owner's other
	// pending jobs, these tasks among them). The rest are written; a
	// rejection would go under the array's ID, which has no record, and
	// stand for the array while its tasks run.
	if _, begun, err := a.expansionBegun(ctx, sub, spec); err != nil {
		return err
	} else if begun {
		return a.admitArray(ctx, msg, sub, job, now)
	}
	if reason, ok, err := a.dependenciesAllowed(ctx, sub, spec); err != nil {
		return err
	} else if !ok {
		return a.reject(ctx, sub, spec, telemetry.RejectInvalid, reason, now)
	}
	if reason, exceeds := queue.ExceedsQuota(a.queues, spec.Queue, spec.GPUs()); exceeds {
		return a.reject(ctx, sub, spec, telemetry.RejectQuota, "queue: "+reason, now)
	}
	if reason, ok := a.fitsCluster(ctx, spec); !ok {
		return a.reject(ctx, sub, spec, telemetry.RejectUnschedulable, "gang: "+reason, now)
	}
	// The policy comes last: a job it admits counts as its owner's pending
	// job from here on.
	release, rej, ok := a.admit(sub, spec, now)
	if !ok {
		return a.reject(ctx, sub, spec, telemetry.RejectPolicy, "queue policy: "+rej.String(), now)
	}

	if isArray(spec) {
		// The tasks are counted by the watch from here on. Until then the
		// tasks written are counted twice, by the watch and from memory:
		// during a long expansion the owner's other submissions may be
		// refused a little early, never admitted beyond the limit.
		defer release()
		return a.admitArray(ctx, msg, sub, job, now)
	}
	err = a.Jobs.Create(ctx, job)
	if err == nil {
		a.Tel.Metrics.Admissions.Add(ctx, 1, metric.WithAttributes(telemetry.LabelQueue.String(spec.Queue)))
	} else {
		release()
		if !errs.IsConflict(err) {
			return err
		}
		// Same ID again: a redelivery re-emits the first delivery's
		// verdict (deduplicated by ID); anything else is refused.
		replay, existing, err := a.taken(ctx, sub, now)
		if err != nil || !replay {
			return err
		}
		job = existing
	}
	return a.announce(ctx, sub, job)
}

// announce publishes the verdict job's record holds: admitted, or
// rejected with its reason. A redelivery announces the record the first
// delivery wrote, whatever the policy would say now (the owner's pending
// jobs have changed since, for one): the record is the verdict, and an
// event lost with the first delivery must still be sent.
func (a *admitter) announce(ctx context.Context, sub submission, job domain.Job) error {
	if job.State == domain.StateRejected {
		ev := events.ForJob(events.Rejected, job, job.EndedAt)
		ev.Reason, ev.MsgID = job.Reason, sub.msgID
		return a.Bus.PublishEvent(ctx, ev)
	}
	ev := events.ForJob(events.Admitted, job, job.PendingSince)
	ev.Attempt = 1
	return a.Bus.PublishEvent(ctx, ev)
}

// reject records a rejected job (when its ID is free) and emits rejected.
// class is the rejection's metric label (telemetry.Reject*). An ID that
// has a record already gets no rejected event, which would read as that
// job's end, unless this is a redelivery of the very submission rejected.
func (a *admitter) reject(ctx context.Context, sub submission, spec jobspec.Spec, class, reason string, now time.Time) error {
	ctx = telemetry.WithJob(ctx, sub.id)
	a.Log.InfoContext(ctx, "rejected submission", "job", sub.id, "msgId", sub.msgID, "owner", sub.owner, "reason", reason)
	spec.ID = sub.id
	job := domain.Job{
		ID: sub.id, Spec: spec, State: domain.StateRejected, Reason: reason, MsgID: sub.msgID,
		SubmittedAt: sub.submitted, EndedAt: now,
		TraceID: telemetry.TraceID(ctx), TraceParent: telemetry.TraceParent(ctx),
		Owner: sub.owner,
	}
	trace.SpanFromContext(ctx).SetAttributes(telemetry.AttrReason.String(class))
	err := a.Jobs.Create(ctx, job)
	switch {
	case err == nil:
		a.Tel.Metrics.Rejections.Add(ctx, 1, metric.WithAttributes(telemetry.LabelReason.String(class)))
	case !errs.IsConflict(err):
		return err
	default:
		replay, existing, err := a.taken(ctx, sub, now)
		if err != nil || !replay {
			return err
		}
		job = existing
	}
	return a.announce(ctx, sub, job)
}

// fitsCluster rejects a gang no amount of waiting can place: it runs the
// real placement on the whole inventory (every node up and empty). With no
// inventory yet, it cannot judge and admits.
func (a *admitter) fitsCluster(ctx context.Context, spec jobspec.Spec) (string, bool) {
	if reason, ok := a.fitsInventory(spec); ok {
		return reason, ok
	}
	// Before rejecting, make sure the inventory view is not just behind a
	// node that registered a moment ago.
	store.CatchUp(ctx, a.Etcd, time.Second, a.inventory)
	return a.fitsInventory(spec)
}

func (a *admitter) fitsInventory(spec jobspec.Spec) (string, bool) {
	a.empty.mu.Lock()
	defer a.empty.mu.Unlock()
	// The generation is read before the nodes, so the snapshot is at least
	// as new as the generation it is filed under.
	if gen := a.inventory.Generation(); a.empty.fits == nil || a.empty.gen != gen {
		nodes := a.inventory.Snapshot()
		if len(nodes) == 0 {
			return "", true
		}
		a.empty.fits, a.empty.gen = place.NewFeasibility(place.EmptyCluster(nodes)), gen
	}
	return a.empty.fits.Check(spec)
}

// claimedID pulls a usable "id" out of a spec that failed validation, so
// the rejection lands on the subject the submitter watches.
func claimedID(raw []byte) string {
	var probe struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &probe) != nil || !jobspec.ValidBaseID(probe.ID) {
		return ""
	}
	return probe.ID
}
