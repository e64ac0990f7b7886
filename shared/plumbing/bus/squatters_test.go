package bus_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// What people could leave on the streams they read to fill the server's
// cap on consumers (durables, consumers kept idle for a day) is removed;
// what readers, the services' watches of the job records and the history
// stream's sourcing of events use is left alone, and keeps working.
func TestRemoveSquattersLeavesReadersAndServicesAlone(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	kv, err := h.b.JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Stop() }()
	// A reader asking to be kept a day gets the readers' bound instead.
	follow, err := h.b.Follow(ctx, subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEventsAll}, InactiveThreshold: 24 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()

	squat := map[string]jetstream.ConsumerConfig{
		subjects.StreamKVJobs:  {Durable: "squat-kv", FilterSubject: subjects.KVJobsAll},
		subjects.StreamEvents:  {Durable: "squat-events", FilterSubject: subjects.JobEventsAll},
		subjects.StreamLogs:    {Name: "squat-logs", FilterSubject: subjects.LogsAll, InactiveThreshold: 24 * time.Hour},
		subjects.StreamHistory: {Name: "idle-history", FilterSubject: subjects.JobEventsAll, InactiveThreshold: 5 * time.Minute},
	}
	for stream, cfg := range squat {
		if _, err := h.b.JS.CreateConsumer(ctx, stream, cfg); err != nil {
			t.Fatalf("consumer on %s: %v", stream, err)
		}
	}
	removed, err := h.b.RemoveSquatters(ctx, auth.ReadableStreams())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sq := range removed {
		got[sq.Stream+"/"+sq.Consumer] = true
	}
	want := map[string]bool{
		subjects.StreamKVJobs + "/squat-kv": true, subjects.StreamEvents + "/squat-events": true, subjects.StreamLogs + "/squat-logs": true,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("removed %v, want the durables and the day-long idle one only: %v", removed, want)
	}

	// The watch, the reader and the history's sourcing still work.
	if _, err := kv.Put(ctx, "after", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-watch.Updates():
		if e == nil || e.Key() != "after" {
			t.Fatalf("watch got %v, want the put of after", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job records' watch went quiet after the sweep")
	}
	if err := h.b.PublishEvent(ctx, events.Event{Type: events.Admitted, JobID: "after", Time: time.Now().UTC(), Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := follow.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
		t.Fatalf("the reader lost its consumer: %v", err)
	}
	hist, err := h.b.JS.Stream(ctx, subjects.StreamHistory)
	if err != nil {
		t.Fatal(err)
	}
	waitMsgs(t, hist, 1)
}
