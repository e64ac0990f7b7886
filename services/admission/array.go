package admission

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// progressEvery is how many tasks an expansion writes between telling the
// bus it is still at work on the message, so that a large array is not
// redelivered to another replica half-way (that would be harmless, only
// wasteful: expansion is idempotent).
const progressEvery = 256

// admitArray expands an admitted array into one job record per task,
// <id>_<index>, each with the array's spec (array block included, for
// reference) and its own ArrayTask, and announces each with admitted.
// The array's own ID has no record.
//
// It is idempotent: every task record carries the message's ID and
// stream time, so a redelivery (after a crash half-way, say) tells the
// tasks it made from anyone else's, re-announces those, and creates the
// rest. A task ID held by another submission refuses the whole array,
// before anything is written; only a race with a concurrent submission
// of the same array ID can still split one, task by task, and then each
// task belongs to one submission and is announced once.
func (a *admitter) admitArray(ctx context.Context, msg jetstream.Msg, sub submission, tmpl domain.Job, now time.Time) error {
	spec := tmpl.Spec
	indexes, err := spec.Array.Tasks()
	if err != nil {
		return a.reject(ctx, sub, spec, telemetry.RejectInvalid, "invalid job spec: "+err.Error(), now)
	}
	// The array's ID must be no job's: cancel and dependencies name the
	// array by it. A record there is a job of that ID, or this very
	// message's rejection (redelivered after the rules changed): either
	// way nothing is expanded.
	if _, _, err := a.Jobs.Get(ctx, sub.id); err == nil {
		replay, existing, err := a.taken(ctx, sub, now)
		if err != nil || !replay || existing.State != domain.StateRejected {
			return err
		}
		return a.reject(ctx, sub, spec, telemetry.RejectInvalid, existing.Reason, now)
	} else if !errs.IsNotFound(err) {
		return err
	}
	tasks := domain.ArrayTasks(sub.id, indexes, min(spec.Array.MaxConcurrent, len(indexes)))
	for _, t := range tasks {
		existing, _, err := a.Jobs.Get(ctx, t.ID())
		switch {
		case errs.IsNotFound(err):
		case err != nil:
			return err
		case existing.Owner != sub.owner || !sub.redeliveryOf(existing):
			return a.refuse(ctx, existing, sub, fmt.Sprintf("array %s: task %s already exists (%s, submitted %s)",
				sub.id, existing.ID, existing.State, existing.SubmittedAt.UTC().Format(time.RFC3339)), now)
		}
	}
	for i, t := range tasks {
		if i > 0 && i%progressEvery == 0 {
			_ = msg.InProgress() // best effort: a redelivery is harmless
		}
		if err := a.admitTask(ctx, sub, tmpl, t, now); err != nil {
			return err
		}
	}
	a.Log.InfoContext(ctx, "array admitted", "array", sub.id, "tasks", len(tasks), "owner", sub.owner)
	return nil
}

// admitTask records one task of an array (or finds the record this
// message made before) and announces it.
func (a *admitter) admitTask(ctx context.Context, sub submission, tmpl domain.Job, t domain.ArrayTask, now time.Time) error {
	job := tmpl
	job.ID = t.ID()
	job.Spec.ID = job.ID
	job.Array = &t
	ctx = telemetry.WithJob(ctx, job.ID)
	err := a.Jobs.Create(ctx, job)
	switch {
	case err == nil:
		a.Tel.Metrics.Admissions.Add(ctx, 1, metric.WithAttributes(telemetry.LabelQueue.String(job.Spec.Queue)))
	case !errs.IsConflict(err):
		return err
	default:
		existing, _, err := a.Jobs.Get(ctx, job.ID)
		if err != nil {
			return err
		}
		if existing.Owner != sub.owner || !sub.redeliveryOf(existing) {
			// Taken since the check above, by a concurrent submission of
			// the same array ID: that one announces it.
			return a.refuse(ctx, existing, sub, fmt.Sprintf("array %s: task %s already exists", sub.id, job.ID), now)
		}
		job = existing
	}
	return a.announce(ctx, sub, job)
}

// isArray reports whether spec is an array submission.
func isArray(spec jobspec.Spec) bool { return spec.Array != nil }
