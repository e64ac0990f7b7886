package otelsdk

import (
	"context"
	"math/rand/v2"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
)

// unrecordedProvider is the tracer provider of a process that exports no
// span (no OTLP endpoint, no span file): the SDK would still record every
// span, its name, attributes and times, only to drop it at End, and a
// service starts two spans or more for every message it handles. Its
// spans record nothing, yet they are what the SDK's would be in a trace:
// each has a span ID of its own, in its parent's trace or a new one, and
// the sampled flag the sampler gives. So the traceparent a job record, a
// message or a rank's environment carries is the same as with the SDK,
// and a collector downstream (the job's own tracing) sees the same trace.
type unrecordedProvider struct {
	embedded.TracerProvider
	sampler sdktrace.Sampler
	tracer  *unrecordedTracer // every name's: nothing is recorded to tell them apart
}

// newUnrecordedProvider returns a provider whose spans are sampled by
// sampler.
func newUnrecordedProvider(sampler sdktrace.Sampler) *unrecordedProvider {
	p := &unrecordedProvider{sampler: sampler}
	p.tracer = &unrecordedTracer{p: p}
	return p
}

func (p *unrecordedProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return p.tracer }

type unrecordedTracer struct {
	embedded.Tracer
	p *unrecordedProvider
}

// Start follows the SDK's choice of IDs and flags (sdktrace's
// tracer.newSpan) and stops before recording anything.
func (t *unrecordedTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg := trace.NewSpanStartConfig(opts...)
	var parent trace.SpanContext
	if cfg.NewRoot() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	} else {
		parent = trace.SpanContextFromContext(ctx)
	}
	tid := parent.TraceID()
	if !tid.IsValid() {
		tid = newTraceID()
	}
	res := t.p.sampler.ShouldSample(sdktrace.SamplingParameters{
		ParentContext: ctx, TraceID: tid, Name: name, Kind: cfg.SpanKind(),
		Attributes: cfg.Attributes(), Links: cfg.Links(),
	})
	flags := parent.TraceFlags() &^ trace.FlagsSampled
	if res.Decision == sdktrace.RecordAndSample {
		flags |= trace.FlagsSampled
	}
	s := unrecordedSpan{p: t.p, sc: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: newSpanID(), TraceFlags: flags, TraceState: res.Tracestate,
	})}
	return trace.ContextWithSpan(ctx, s), s
}

// unrecordedSpan is a span that records nothing and carries its own
// context, unlike noop.Span, which has none.
type unrecordedSpan struct {
	noop.Span
	p  *unrecordedProvider
	sc trace.SpanContext
}

func (s unrecordedSpan) SpanContext() trace.SpanContext       { return s.sc }
func (s unrecordedSpan) TracerProvider() trace.TracerProvider { return s.p }

// The IDs are random and never zero (a zero ID is invalid); they need not
// be secret, only unique, as the SDK's own generator's are.
func newTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		hi, lo := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			id[i], id[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
		}
	}
	return id
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		v := rand.Uint64()
		for i := range 8 {
			id[i] = byte(v >> (56 - 8*i))
		}
	}
	return id
}
