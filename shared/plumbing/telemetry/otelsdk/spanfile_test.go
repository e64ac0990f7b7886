package otelsdk

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

func TestSpanFileRoundTripAndRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), telemetry.SpanFileName)
	fe, err := NewFileExporter(path, 2000)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(fe))
	tr := tp.Tracer("test")
	ctx, root := tr.Start(context.Background(), "process lockstep.v1.jobs.submit", trace.WithSpanKind(trace.SpanKindConsumer))
	root.SetAttributes(telemetry.AttrJobID.String("job-1"))
	for range 20 {
		_, s := tr.Start(ctx, telemetry.SpanReserve)
		s.SetAttributes(telemetry.AttrLeaves.StringSlice([]string{"leaf-1"}), telemetry.AttrConflicts.Int(0))
		s.End()
	}
	root.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no rotated file after exceeding the limit: %v", err)
	}
	spans, err := telemetry.ReadSpanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := spans[len(spans)-1]
	if last.Name != "process lockstep.v1.jobs.submit" || last.Kind != telemetry.KindConsumer || last.Attr(string(telemetry.AttrJobID)) != "job-1" || !last.IsRoot() {
		t.Errorf("last span read back as %+v", last)
	}
	if got := spans[0].Attr(string(telemetry.AttrLeaves)); got != `["leaf-1"]` {
		t.Errorf("slice attribute read back as %q", got)
	}
	if spans[0].ParentSpanID != last.SpanID || spans[0].TraceID != last.TraceID {
		t.Errorf("child does not point at its parent")
	}
	if _, err := telemetry.ReadSpanFile(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Error("a missing span file read without error")
	}
}
