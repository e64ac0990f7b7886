package bus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func TestForeignSubjectsAreTheOtherStreams(t *testing.T) {
	foreign := bus.ForeignSubjects()
	want := []string{subjects.KVJobsAll, subjects.EventsAll, subjects.LogsAll, subjects.WorkAll}
	slices.Sort(want)
	if got := foreign[subjects.StreamJobs]; !slices.Equal(got, want) {
		t.Errorf("foreign to %s: %v, want %v", subjects.StreamJobs, got, want)
	}
	if got := foreign[subjects.StreamKVJobs]; slices.Contains(got, subjects.KVJobsAll) || !slices.Contains(got, subjects.JobsAll) {
		t.Errorf("foreign to %s: %v, want every stream's subjects but its own", subjects.StreamKVJobs, got)
	}
	if _, ok := foreign[subjects.StreamHistory]; ok {
		t.Errorf("the history stream, which has no subjects, has foreign ones: %v", foreign[subjects.StreamHistory])
	}
}

// A pull whose reply subject is another stream's has that stream store
// the delivered message under its original subject, where nobody consumes
// it. PurgeForeign removes exactly those, and leaves the streams' own.
func TestPurgeForeignRemovesRedirectedDeliveries(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.env.Jobs(t).Create(ctx, domain.Job{ID: "kept", State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := h.b.PublishJSON(ctx, subjects.Submit, "own-submit", map[string]string{"name": "mine"}); err != nil {
		t.Fatal(err)
	}
	event := subjects.JobEventsAll[:len(subjects.JobEventsAll)-1] + "alice.j1.submitted"
	if err := h.b.PublishJSON(ctx, event, "ev-1", map[string]string{"type": "submitted"}); err != nil {
		t.Fatal(err)
	}
	redirect := func(stream, filter, onto string) {
		t.Helper()
		name := "redirect-" + stream[:3]
		if _, err := h.b.JS.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
			Durable: name, FilterSubject: filter, AckPolicy: jetstream.AckNonePolicy,
		}); err != nil {
			t.Fatal(err)
		}
		if err := h.b.NC.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+stream+"."+name, onto, []byte(`{"batch":10,"no_wait":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	redirect(subjects.StreamEvents, subjects.EventsAll, subjects.Submit)
	redirect(subjects.StreamKVJobs, subjects.KVJobsAll, subjects.Reserve)
	jobsStream, err := h.b.JS.Stream(ctx, subjects.StreamJobs)
	if err != nil {
		t.Fatal(err)
	}
	workStream, err := h.b.JS.Stream(ctx, subjects.StreamWork)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, err := jobsStream.GetLastMsgForSubject(ctx, subjects.EventsAll); err != nil {
			return errors.Wrap(err, "the redirected event is not stored in the jobs stream yet")
		}
		if _, err := workStream.GetLastMsgForSubject(ctx, subjects.KVJobsAll); err != nil {
			return errors.Wrap(err, "the redirected record is not stored in the work stream yet")
		}
		return nil
	})

	found, err := h.b.PurgeForeign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []bus.Purged{
		{Stream: subjects.StreamJobs, Filter: subjects.EventsAll, Example: event},
		{Stream: subjects.StreamWork, Filter: subjects.KVJobsAll, Example: "$KV." + subjects.BucketJobs + ".kept"},
	}
	if !slices.Equal(found, want) {
		t.Errorf("purged %+v, want %+v", found, want)
	}
	if again, err := h.b.PurgeForeign(ctx); err != nil || len(again) != 0 {
		t.Errorf("a second pass found %+v (%v), want nothing left", again, err)
	}
	if _, err := jobsStream.GetLastMsgForSubject(ctx, subjects.Submit); err != nil {
		t.Errorf("the jobs stream's own submission: %v", err)
	}
	if _, _, err := h.env.Jobs(t).Get(ctx, "kept"); err != nil {
		t.Errorf("the job record: %v", err)
	}
	events, err := h.b.JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.GetLastMsgForSubject(ctx, event); err != nil {
		t.Errorf("the event in its own stream: %v", err)
	}
}
