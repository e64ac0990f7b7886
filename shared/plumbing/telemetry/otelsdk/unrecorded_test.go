package otelsdk

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// A process that exports no span gets unrecorded spans; one that exports,
// or whose sampler only the SDK can read from the environment, gets the
// SDK's.
func TestSpansAreRecordedOnlyWhenExported(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	for _, c := range []struct {
		name      string
		cfg       Config
		env       string
		recording bool
	}{
		{"no exporter", Config{Service: "gang"}, "", false},
		{"no exporter, a configured sampler", Config{Service: "gang", Sampler: sdktrace.AlwaysSample()}, "", false},
		{"an exporter", Config{Service: "gang", SpanExporters: []sdktrace.SpanExporter{tracetest.NewInMemoryExporter()}}, "", true},
		{"a span file", Config{Service: "gang", SpanFile: t.TempDir() + "/spans.jsonl"}, "", true},
		{"a sampler from the environment", Config{Service: "gang"}, "always_on", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", c.env)
			ctx := context.Background()
			tel, err := Setup(ctx, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tel.Shutdown(ctx) }()
			_, span := tel.Service("gang", "t").Tracer.Start(ctx, "x")
			defer span.End()
			if span.IsRecording() != c.recording || !span.SpanContext().IsValid() {
				t.Errorf("recording %v, valid %v; want recording %v and valid", span.IsRecording(), span.SpanContext().IsValid(), c.recording)
			}
		})
	}
}

// The spans of the unrecorded provider must carry what the SDK's carry, as
// that is what reaches job records, messages and ranks: the parent's trace
// (or a new one), an ID of their own, the sampler's flag and trace state.
func TestUnrecordedSpansCarryWhatTheSDKsCarry(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	state, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	remote := func(flags trace.TraceFlags) context.Context {
		return trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: state, Remote: true,
		}))
	}
	parents := []struct {
		name string
		ctx  context.Context
		opts []trace.SpanStartOption
	}{
		{"root", context.Background(), nil},
		{"sampled remote parent", remote(trace.FlagsSampled), nil},
		{"unsampled remote parent", remote(0), nil},
		{"new root under a parent", remote(trace.FlagsSampled), []trace.SpanStartOption{trace.WithNewRoot()}},
	}
	for _, sampler := range []sdktrace.Sampler{
		sdktrace.ParentBased(sdktrace.AlwaysSample()), sdktrace.NeverSample(), sdktrace.AlwaysSample(), recordOnly{},
	} {
		sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler)).Tracer("t")
		ours := newUnrecordedProvider(sampler).Tracer("t")
		for _, p := range parents {
			t.Run(sampler.Description()+"/"+p.name, func(t *testing.T) {
				parent := trace.SpanContextFromContext(p.ctx)
				wctx, want := sdk.Start(p.ctx, "x", p.opts...)
				gctx, got := ours.Start(p.ctx, "x", p.opts...)
				w, g := want.SpanContext(), got.SpanContext()
				if !g.IsValid() || g.IsRemote() || got.IsRecording() {
					t.Fatalf("span context %+v (recording %v): want a valid local one, not recording", g, got.IsRecording())
				}
				if g.IsSampled() != w.IsSampled() || g.TraceState().String() != w.TraceState().String() {
					t.Errorf("sampled %v, state %q; the SDK's: %v, %q", g.IsSampled(), g.TraceState(), w.IsSampled(), w.TraceState())
				}
				if gotSame, wantSame := g.TraceID() == parent.TraceID(), w.TraceID() == parent.TraceID(); gotSame != wantSame {
					t.Errorf("in the parent's trace: %v, the SDK's span: %v", gotSame, wantSame)
				}
				if g.SpanID() == parent.SpanID() {
					t.Error("the span took its parent's ID")
				}
				// A child continues the trace as the SDK's child does.
				_, wc := sdk.Start(wctx, "child")
				_, gc := telemetry.StartChild(gctx, "child")
				if gc.SpanContext().TraceID() != g.TraceID() || gc.SpanContext().SpanID() == g.SpanID() ||
					gc.SpanContext().IsSampled() != wc.SpanContext().IsSampled() {
					t.Errorf("child %+v of %+v; the SDK's child sampled: %v", gc.SpanContext(), g, wc.SpanContext().IsSampled())
				}
			})
		}
	}
}

// recordOnly records without sampling and writes its own trace state: the
// flag and the state must come from the sampler's answer, not the parent.
type recordOnly struct{}

func (recordOnly) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	ts, _ := trace.SpanContextFromContext(p.ParentContext).TraceState().Insert("lockstep", "ro")
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly, Tracestate: ts}
}

func (recordOnly) Description() string { return "RecordOnly" }

func TestUnrecordedSpanIDsAreUnique(t *testing.T) {
	tr := newUnrecordedProvider(sdktrace.AlwaysSample()).Tracer("t")
	seen := map[trace.SpanID]bool{}
	traces := map[trace.TraceID]bool{}
	for range 10000 {
		_, s := tr.Start(context.Background(), "x")
		sc := s.SpanContext()
		if seen[sc.SpanID()] || traces[sc.TraceID()] {
			t.Fatalf("a span or trace ID repeated after %d spans", len(seen))
		}
		seen[sc.SpanID()], traces[sc.TraceID()] = true, true
	}
}
