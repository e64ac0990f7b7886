package agent

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// A container gang's pull phase on this node (domain/pull.go): an
// assignment with PullOnly makes the image present as container.pullPolicy
// says, within container.pullTimeout, and reports pulled (time, size) or
// pull-failed (the engine's message); it starts nothing. Gang clears
// PullOnly on every node once all have pulled, and the assignment's
// rewrite starts the ranks as for any job. The pull runs beside the
// assignment watch, so a cancel (the assignment deleted) ends it at once.

// imagePull is one attempt's pull on this node.
type imagePull struct {
	attempt int
	cancel  context.CancelFunc
	// done is closed when the pull ended; err (set before) is its outcome.
	done chan struct{}
	err  error
}

// beginPull starts the pull of a PullOnly assignment, unless this attempt's
// is already under way or done (an assignment is seen again when the watch
// lists anew). ctx is the registration's: the pull ends with it.
func (e *executor) beginPull(ctx context.Context, tr trace.Tracer, as domain.Assignment) {
	e.mu.Lock()
	if p, ok := e.pulls[as.JobID]; ok {
		if p.attempt >= as.Attempt {
			e.mu.Unlock()
			return
		}
		p.cancel() // an earlier attempt's
	}
	spec := as.Container.WithDefaults()
	pctx, cancel := context.WithTimeout(ctx, spec.PullTimeout.Duration())
	p := &imagePull{attempt: as.Attempt, cancel: cancel, done: make(chan struct{})}
	e.pulls[as.JobID] = p
	e.mu.Unlock()

	// The pull is its own span of the job's trace (the "agent.image" span).
	pctx, span := telemetry.Continue(pctx, tr, as.TraceParent, telemetry.SpanImage,
		telemetry.AttrJobID.String(as.JobID), telemetry.AttrAttempt.Int(as.Attempt), telemetry.AttrNode.String(e.cfg.Node.Name),
		attribute.String("lockstep.image", spec.Image), attribute.String("lockstep.image.policy", spec.PullPolicy))
	pctx = telemetry.WithJob(pctx, as.JobID)
	go func() {
		defer cancel()
		t0 := time.Now()
		res, err := e.pullNow(pctx, spec)
		took := time.Since(t0)
		span.SetAttributes(attribute.Bool("lockstep.image.pulled", res.Pulled), attribute.Int64("lockstep.image.ensure_ms", took.Milliseconds()),
			attribute.Int64("lockstep.image.bytes", res.Bytes))
		telemetry.End(span, err)
		p.err = err
		close(p.done)
		if ctx.Err() != nil || errors.Is(pctx.Err(), context.Canceled) {
			return // the registration ended, or the assignment went: nobody to tell
		}
		r := domain.Report{JobID: as.JobID, Attempt: as.Attempt}
		if err != nil {
			e.log.WarnContext(pctx, "container image pull failed", "job", as.JobID, "attempt", as.Attempt, "image", spec.Image, "took", took, "err", err)
			r.Kind, r.Reason = domain.ReportPullFailed, err.Error()
		} else {
			e.log.InfoContext(pctx, "container image ready", "job", as.JobID, "attempt", as.Attempt, "image", spec.Image,
				"policy", spec.PullPolicy, "pulled", res.Pulled, "bytes", res.Bytes, "took", took)
			r.Kind, r.PullMillis, r.ImageBytes, r.Pulled = domain.ReportPulled, min(took.Milliseconds(), domain.MaxPullMillis), res.Bytes, res.Pulled
		}
		e.report(context.WithoutCancel(pctx), r)
	}()
}

// pullNow makes the image present through the engine, bounded by ctx
// (container.pullTimeout).
func (e *executor) pullNow(ctx context.Context, spec jobspec.Container) (containers.Pulled, error) {
	if e.engine == nil {
		return containers.Pulled{}, e.noEngine()
	}
	res, err := e.engine.Pull(ctx, spec.Image, spec.PullPolicy)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return containers.Pulled{}, errors.Newf("image %s was not present within container.pullTimeout %s", spec.Image, spec.PullTimeout.Duration())
	}
	return res, err
}

// pulledFor reports whether this node's pull phase of the attempt ended
// with the image present; it waits for a pull still under way (gang
// starts the ranks only after this node reported, so it seldom does).
func (e *executor) pulledFor(jobID string, attempt int) bool {
	e.mu.Lock()
	p, ok := e.pulls[jobID]
	e.mu.Unlock()
	if !ok || p.attempt != attempt {
		return false
	}
	<-p.done
	return p.err == nil
}

// endPulls cancels the pulls for which keep returns false and forgets them.
func (e *executor) endPulls(keep func(jobID string) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, p := range e.pulls {
		if !keep(id) {
			p.cancel()
			delete(e.pulls, id)
		}
	}
}
