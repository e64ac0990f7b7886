package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// Lockstep's span attributes (docs/telemetry.md).
const (
	AttrJobID     = attribute.Key("lockstep.job.id")
	AttrAttempt   = attribute.Key("lockstep.attempt")
	AttrQueue     = attribute.Key("lockstep.queue")
	AttrGangSize  = attribute.Key("lockstep.gang.size")  // GPUs of the gang
	AttrGangNodes = attribute.Key("lockstep.gang.nodes") // nodes of the gang
	AttrLeaves    = attribute.Key("lockstep.leaves")     // leaf switches chosen
	AttrNodes     = attribute.Key("lockstep.nodes")      // nodes chosen
	AttrConflicts = attribute.Key("lockstep.conflicts")  // slots lost to a race
	AttrEventType = attribute.Key("lockstep.event.type")
	AttrNode      = attribute.Key("lockstep.node")
	AttrReport    = attribute.Key("lockstep.report.kind")
	AttrRanks     = attribute.Key("lockstep.ranks")
	AttrDrainKind = attribute.Key("lockstep.drain.kind")
	AttrDrainThen = attribute.Key("lockstep.drain.then")
	AttrReason    = attribute.Key("lockstep.reason")
)

// Internal span names: one per step worth seeing in a job's waterfall.
const (
	SpanPropose   = "placement.propose" // a placement decision for one job
	SpanReserve   = "gang.reserve"      // the all-or-nothing etcd Txn
	SpanRequeue   = "gang.requeue"      // a lost gang goes back to the queue
	SpanLaunch    = "agent.launch"      // start this node's ranks
	SpanRun       = "agent.run"         // this node's ranks, from start to exit
	SpanImage     = "agent.image"       // making a container job's image present
	SpanPull      = "gang.pull"         // a container gang's pull phase: reservation → image on every node
	SpanSignal    = "agent.checkpoint"  // ask local ranks to checkpoint
	SpanCancel    = "drain.cancel"      // cancel at once
	SpanDrain     = "drain.start"       // start a checkpoint drain
	SpanDrainDone = "drain.complete"    // end a drain: release, requeue or cancel
)

// Messaging operations, the first word of a messaging span's name.
const (
	OpSend    = "send"
	OpProcess = "process"
)

// SpanName is a messaging span's name: the operation and the subject's
// template, never an ID ("send lockstep.v1.events.job.{owner}.{jobId}.{type}").
func SpanName(op, subject string) string { return op + " " + subjects.Template(subject) }

// messagingAttrs are the semantic-convention attributes of a NATS message.
func messagingAttrs(op, subject, msgID string, size int) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String("nats"),
		semconv.MessagingDestinationName(subjects.Template(subject)),
		semconv.MessagingOperationName(op),
		semconv.MessagingMessageBodySize(size),
	}
	if op == OpSend {
		attrs = append(attrs, semconv.MessagingOperationTypeSend)
	} else {
		attrs = append(attrs, semconv.MessagingOperationTypeProcess)
	}
	if msgID != "" {
		attrs = append(attrs, semconv.MessagingMessageID(msgID))
	}
	return attrs
}

// StartSend starts the PRODUCER span of one publish; the caller injects the
// returned context into the message's headers.
func StartSend(ctx context.Context, tr trace.Tracer, subject, msgID string, size int, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx, span := tr.Start(ctx, SpanName(OpSend, subject), trace.WithSpanKind(trace.SpanKindProducer))
	if span.IsRecording() {
		span.SetAttributes(messagingAttrs(OpSend, subject, msgID, size)...)
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// StartProcess starts the CONSUMER span of handling one message. ctx must
// already carry the message's extracted context (Extract): the publisher's
// span is the parent, so one job stays one trace across services.
func StartProcess(ctx context.Context, tr trace.Tracer, subject, durable, msgID string, size int) (context.Context, trace.Span) {
	ctx, span := tr.Start(ctx, SpanName(OpProcess, subject), trace.WithSpanKind(trace.SpanKindConsumer))
	if span.IsRecording() {
		attrs := messagingAttrs(OpProcess, subject, msgID, size)
		if durable != "" {
			attrs = append(attrs, semconv.MessagingConsumerGroupName(durable))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// Continue starts an INTERNAL span in a job's trace. traceParent is the
// job's (or a record's) W3C traceparent: when the span in ctx belongs to
// another trace (a cancel request from a CLI, a reconciler pass) the new
// span's parent is traceParent and it links to the span in ctx; otherwise,
// or when traceParent is empty, it is simply a child of ctx.
func Continue(ctx context.Context, tr trace.Tracer, traceParent, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	cur := trace.SpanContextFromContext(ctx)
	if job := SpanContextOf(traceParent); job.IsValid() && job.TraceID() != cur.TraceID() {
		if cur.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: cur}))
		}
		ctx = trace.ContextWithRemoteSpanContext(ctx, job)
	}
	return tr.Start(ctx, name, opts...)
}

// StartChild starts an INTERNAL span under the span in ctx, with that
// span's own tracer provider. Use it only below a span the service itself
// started (a remote parent has no provider, and the child would be lost).
func StartChild(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tr := trace.SpanFromContext(ctx).TracerProvider().Tracer(ScopeName)
	return tr.Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends a span, marking it failed when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// JobAttrs describes a job on a span.
func JobAttrs(j domain.Job) []attribute.KeyValue {
	return []attribute.KeyValue{
		AttrJobID.String(j.ID), AttrAttempt.Int(j.Attempt), AttrQueue.String(j.Spec.Queue),
		AttrGangSize.Int(j.Spec.GPUs()), AttrGangNodes.Int(j.Spec.Gang.Nodes),
	}
}

// PlacementAttrs describes where a gang goes.
func PlacementAttrs(p domain.Placement) []attribute.KeyValue {
	return []attribute.KeyValue{AttrLeaves.StringSlice(p.Leaves), AttrNodes.StringSlice(p.NodeNames())}
}

type jobKey struct{}

// WithJob tags the span in ctx with a job ID and remembers the ID for log
// lines written with ctx (the log handler adds it as "job").
func WithJob(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	trace.SpanFromContext(ctx).SetAttributes(AttrJobID.String(id))
	return context.WithValue(ctx, jobKey{}, id)
}

// JobID returns the job ID WithJob put in ctx.
func JobID(ctx context.Context) string {
	id, _ := ctx.Value(jobKey{}).(string)
	return id
}

// ScopeName is the instrumentation scope of every Lockstep tracer and meter.
const ScopeName = "github.com/lockstep-dev/lockstep"
