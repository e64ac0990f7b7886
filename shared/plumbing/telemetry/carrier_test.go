package telemetry

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func testTracer(t *testing.T) (trace.Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer("test"), exp
}

func TestHeadersCarryTraceContext(t *testing.T) {
	tr, _ := testTracer(t)
	ctx, span := tr.Start(context.Background(), "publisher")
	defer span.End()
	h := nats.Header{}
	Inject(ctx, h)
	if h.Get("traceparent") == "" {
		t.Fatalf("no traceparent injected: %v", h)
	}
	got := trace.SpanContextFromContext(Extract(context.Background(), h))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Errorf("extracted %v, want remote %v", got, span.SpanContext())
	}
}

func TestHeaderLookupIgnoresCase(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h := nats.Header{}
	h.Set("Traceparent", tp) // as some publishers capitalise it
	if got := TraceID(Extract(context.Background(), h)); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("trace ID = %q", got)
	}
}

func TestRecordFieldCarriesTraceParent(t *testing.T) {
	tr, _ := testTracer(t)
	ctx, span := tr.Start(context.Background(), "admission")
	defer span.End()
	tp := TraceParent(ctx)
	if tp == "" {
		t.Fatal("no traceparent for a live span")
	}
	sc := SpanContextOf(tp)
	if sc.TraceID() != span.SpanContext().TraceID() || sc.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("round trip gave %v, want %v", sc, span.SpanContext())
	}
	if TraceParent(context.Background()) != "" {
		t.Error("traceparent without a span")
	}
	if ctx2 := WithTraceParent(ctx, ""); !trace.SpanContextFromContext(ctx2).Equal(span.SpanContext()) {
		t.Error("an empty traceparent changed the context")
	}
	if SpanContextOf("garbage").IsValid() {
		t.Error("garbage parsed as a span context")
	}
}

func TestContinueJoinsTheJobTraceAndLinksTheRequest(t *testing.T) {
	tr, exp := testTracer(t)
	_, job := tr.Start(context.Background(), "admission")
	job.End()
	reqCtx, req := tr.Start(context.Background(), "process cancel") // another trace
	_, span := Continue(reqCtx, tr, TraceParent(trace.ContextWithSpan(context.Background(), job)), SpanCancel)
	span.End()
	req.End()
	var got sdktrace.ReadOnlySpan
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Name() == SpanCancel {
			got = s
		}
	}
	if got == nil {
		t.Fatal("no cancel span")
	}
	if got.SpanContext().TraceID() != job.SpanContext().TraceID() || got.Parent().SpanID() != job.SpanContext().SpanID() {
		t.Errorf("cancel span is not a child of the job's span")
	}
	if len(got.Links()) != 1 || got.Links()[0].SpanContext.SpanID() != req.SpanContext().SpanID() {
		t.Errorf("cancel span links %v, want the request", got.Links())
	}

	// Already in the job's trace: a plain child, no link.
	jctx := trace.ContextWithSpan(context.Background(), job)
	_, child := Continue(jctx, tr, TraceParent(jctx), SpanRequeue)
	child.End()
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Name() == SpanRequeue && (len(s.Links()) != 0 || s.Parent().SpanID() != job.SpanContext().SpanID()) {
			t.Errorf("requeue span: parent %v links %v", s.Parent(), s.Links())
		}
	}
}

func TestSpanNamesUseTemplates(t *testing.T) {
	for subject, want := range map[string]string{
		"lockstep.v1.events.job.alice.hello-1a2b.reserved": "send lockstep.v1.events.job.{owner}.{jobId}.{type}",
		"lockstep.v1.events.node.node-01.node-up":          "send lockstep.v1.events.node.{node}.{type}",
		"lockstep.v1.work.reserve":                         "send lockstep.v1.work.reserve",
	} {
		if got := SpanName(OpSend, subject); got != want {
			t.Errorf("SpanName(%s) = %q, want %q", subject, got, want)
		}
	}
}

func TestPendingReasonIsACode(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "None",
		"Resources":                    "Resources",
		"ReservationConflict: n1/gpu2": "ReservationConflict",
		"Reserved (starts ≈ 14:02)":    "Reserved",
	} {
		if got := PendingReason(in); got != want {
			t.Errorf("PendingReason(%q) = %q, want %q", in, got, want)
		}
	}
}
