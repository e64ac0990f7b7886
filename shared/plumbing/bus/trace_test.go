package bus_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A publish under a span and the consumer of that message form one trace:
// PRODUCER send span, CONSUMER process span as its child, with the
// messaging attributes; the handler's context carries the process span.
func TestPublishAndConsumeAreOneTrace(t *testing.T) {
	env := testenv.Start(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	b, err := bus.Connect(context.Background(), env.NATSURL, "trace-test", bus.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan trace.SpanContext, 1)
	if _, err := b.Consume(ctx, bus.ConsumerSpec{Stream: subjects.StreamWork, Durable: "trace-test", Filter: subjects.Reserve},
		slog.New(slog.DiscardHandler), func(ctx context.Context, _ jetstream.Msg) error {
			got <- trace.SpanContextFromContext(ctx)
			return nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := b.Ready(ctx); err != nil {
		t.Errorf("ready with a running consumer: %v", err)
	}
	pctx, parent := tp.Tracer("test").Start(context.Background(), "placement.propose")
	if err := b.PublishJSON(pctx, subjects.Reserve, "propose.j1.1.0", domain.Proposal{JobID: "j1"}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var hctx trace.SpanContext
	select {
	case hctx = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("message not consumed")
	}
	if hctx.TraceID() != parent.SpanContext().TraceID() {
		t.Fatalf("handler runs in trace %s, want the publisher's %s", hctx.TraceID(), parent.SpanContext().TraceID())
	}
	// The event path: an event's span is named by its subject template.
	if err := b.PublishEvent(pctx, events.Event{Type: events.Admitted, JobID: "j1", Attempt: 1, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}

	byName := map[string]tracetest.SpanStub{}
	testenv.Eventually(t, 5*time.Second, func() error {
		for _, s := range exp.GetSpans() {
			byName[s.Name] = s
		}
		if len(byName) < 4 {
			return context.DeadlineExceeded
		}
		return nil
	})
	send, process := byName["send lockstep.v1.work.reserve"], byName["process lockstep.v1.work.reserve"]
	if send.SpanKind != trace.SpanKindProducer || process.SpanKind != trace.SpanKindConsumer {
		t.Errorf("kinds: send %v, process %v", send.SpanKind, process.SpanKind)
	}
	if process.Parent.SpanID() != send.SpanContext.SpanID() || send.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("want propose → send → process; send's parent %v, process's parent %v", send.Parent.SpanID(), process.Parent.SpanID())
	}
	attrs := map[string]string{}
	for _, kv := range process.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	for k, want := range map[string]string{
		"messaging.system": "nats", "messaging.destination.name": subjects.Reserve, "messaging.operation.type": "process",
		"messaging.consumer.group.name": "trace-test", "messaging.message.id": "propose.j1.1.0",
	} {
		if attrs[k] != want {
			t.Errorf("process span %s = %q, want %q", k, attrs[k], want)
		}
	}
	if _, ok := byName["send "+subjects.JobEventT]; !ok {
		t.Errorf("no span named after the event template; have %v", keys(byName))
	}
}

func keys(m map[string]tracetest.SpanStub) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
