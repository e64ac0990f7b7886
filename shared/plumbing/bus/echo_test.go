package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// A pull of one's own events whose reply names one of one's own event
// subjects has the stream store each delivery again, and a waiting pull
// then gets that copy too: one pull makes as many as its batch. The
// per-subject bound keeps them to EventsPerSubject.
func TestEventsEchoedIntoTheirOwnStreamStayBounded(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	job := domain.Job{ID: "echo", Owner: "alice", State: domain.StatePending, Attempt: 1}
	ev := events.ForJob(events.Admitted, job, time.Now())
	if err := h.b.PublishEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	// alice may read (and so pull) every event of hers.
	mine := subjects.JobEvents(job.Owner, job.ID)
	if _, err := h.b.JS.CreateOrUpdateConsumer(ctx, subjects.StreamEvents, jetstream.ConsumerConfig{
		Durable: "echo", FilterSubject: mine, AckPolicy: jetstream.AckNonePolicy,
	}); err != nil {
		t.Fatal(err)
	}
	stream, err := h.b.JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	var most, all uint64
	onto := subjects.JobEvent(job.Owner, job.ID, "x")
	for range 40 {
		if err := h.b.NC.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+subjects.StreamEvents+".echo", onto, []byte(`{"batch":5000,"no_wait":true}`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(mine))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range info.State.Subjects {
		most, all = max(most, n), all+n
	}
	if most > bus.EventsPerSubject {
		t.Errorf("%d copies under one subject, more than the %d a subject keeps", most, bus.EventsPerSubject)
	}
	if all < bus.EventsPerSubject {
		t.Skipf("the server stored only %d messages: the echo this bounds did not happen", all)
	}
}
