package otelsdk

import (
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"

	"context"
	"testing"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// BenchmarkReservationSpans is the tracing work the gang service does for
// one reservation, alone: extract the proposal's context, the CONSUMER span
// with its attributes, the gang.reserve span and the traceparent written to
// the allocation, the PRODUCER span of the reserved event injected into its
// headers; every span sampled and exported (batch processor, in-memory
// exporter). Set against the CPU time of a whole reservation
// (BenchmarkTracingOverhead's cpu-µs/reservation), it bounds the overhead
// without the noise of an end-to-end run.
//
//	go test -run '^$' -bench ReservationSpans ./shared/plumbing/telemetry/otelsdk/
func BenchmarkReservationSpans(b *testing.B) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tel, err := Setup(ctx, Config{Service: "gang", Sampler: sdktrace.AlwaysSample(), SpanExporters: []sdktrace.SpanExporter{exp}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(ctx) }()
	flush := func() {
		_ = tel.ForceFlush(ctx)
		exp.Reset()
	}
	reservationSpans(b, tel.Service("placement", "bench").Tracer, tel.Service("gang", "bench").Tracer, flush)
	_ = tel.ForceFlush(ctx)
}

// BenchmarkReservationSpansUnexported is the same work in a process that
// exports no span: the SDK's spans, recorded and dropped, against the
// unrecorded ones the process now gets.
//
//	go test -run '^$' -bench ReservationSpansUnexported ./shared/plumbing/telemetry/otelsdk/
func BenchmarkReservationSpansUnexported(b *testing.B) {
	sampler := sdktrace.ParentBased(sdktrace.AlwaysSample())
	for _, c := range []struct {
		name string
		tp   trace.TracerProvider
	}{
		{"sdk", sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))},
		{"unrecorded", newUnrecordedProvider(sampler)},
	} {
		b.Run(c.name, func(b *testing.B) {
			reservationSpans(b, c.tp.Tracer("placement"), c.tp.Tracer("gang"), func() {})
		})
	}
}

func reservationSpans(b *testing.B, placement, tr trace.Tracer, flush func()) {
	ctx := context.Background()
	pctx, parent := placement.Start(ctx, telemetry.SpanPropose)
	parent.End()
	hdr := nats.Header{}
	telemetry.Inject(pctx, hdr)
	job := domain.Job{ID: "bench-1", Attempt: 1, Spec: jobspec.Spec{Queue: "default", Gang: jobspec.Gang{Nodes: 2, GPUsPerNode: 8}}}
	pl := domain.Placement{Leaves: []string{"leaf-1"}, Nodes: []domain.NodePlacement{{Node: "n1"}, {Node: "n2"}}}
	event := "lockstep.v1.events.job.bench-1.reserved"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		mctx, process := telemetry.StartProcess(telemetry.Extract(ctx, hdr), tr, subjects.Reserve, subjects.DurableGang, "propose.bench-1.1.0", 900)
		process.SetAttributes(append(telemetry.JobAttrs(job), telemetry.PlacementAttrs(pl)...)...)
		rctx, reserve := tr.Start(mctx, telemetry.SpanReserve)
		_ = telemetry.TraceParent(rctx)
		reserve.SetAttributes(telemetry.AttrConflicts.Int(0))
		reserve.End()
		sctx, send := telemetry.StartSend(mctx, tr, event, "job.bench-1.1.reserved", 700, telemetry.AttrEventType.String("reserved"), telemetry.AttrJobID.String(job.ID))
		telemetry.Inject(sctx, nats.Header{})
		send.End()
		process.End()
		if i++; i%4096 == 0 {
			flush()
		}
	}
}
