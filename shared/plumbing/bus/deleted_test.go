package bus_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// A consumer deleted before the loop's first pull reaches the server gets
// no "Consumer Deleted" answer, only silence; the loop must still stop, so
// that the service fails and is restarted rather than wait for ever.
func TestConsumeStopsWhenItsConsumerWasDeletedBeforeItsFirstPull(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := bus.ConsumerSpec{Stream: subjects.StreamJobs, Durable: "deleted-early", Filter: subjects.Submit}
	cons, err := h.b.JS.CreateOrUpdateConsumer(ctx, spec.Stream, jetstream.ConsumerConfig{
		Durable: spec.Durable, FilterSubject: spec.Filter, AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.b.JS.DeleteConsumer(ctx, spec.Stream, spec.Durable); err != nil {
		t.Fatal(err)
	}
	done, err := h.b.ConsumeBound(ctx, spec, cons, slog.New(slog.DiscardHandler),
		func(context.Context, jetstream.Msg) error { return nil }, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop still runs 10 s after its consumer was deleted")
	}
	if ctx.Err() != nil {
		t.Fatal("the loop stopped only because its context ended")
	}
}
