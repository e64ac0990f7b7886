package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// The history stream is a server-side copy of the lifecycle job events:
// no service writes it, it keeps nothing else, it outlives a purge of the
// events stream, and its age is the option's.
func TestHistoryStreamSourcesLifecycleEvents(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{HistoryAge: 48 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, ev := range []events.Event{
		{Type: events.Admitted, JobID: "a", Time: now, Attempt: 1},
		{Type: events.Draining, JobID: "a", Time: now, Attempt: 1, Reason: "x", Signal: "SIGUSR1"},
		{Type: events.Succeeded, JobID: "a", Time: now, Attempt: 1},
		{Type: events.NodeUp, Node: "n1", Time: now, Epoch: 1},
	} {
		if err := h.b.PublishEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := h.b.JS.Stream(ctx, subjects.StreamHistory)
	if err != nil {
		t.Fatal(err)
	}
	if got := hist.CachedInfo().Config.MaxAge; got != 48*time.Hour {
		t.Errorf("history max age = %s, want the option's 48h", got)
	}
	waitMsgs(t, hist, 2)
	evs, err := h.b.JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := evs.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	for seq, want := range map[uint64]string{1: subjects.JobEvent("", "a", "admitted"), 2: subjects.JobEvent("", "a", "succeeded")} {
		msg, err := hist.GetMsg(ctx, seq)
		if err != nil || msg.Subject != want {
			t.Errorf("history message %d = %v %v, want subject %s", seq, msg, err, want)
		}
	}
	info, _ := hist.Info(ctx)
	if info.State.Msgs != 2 {
		t.Errorf("history holds %d messages after the events purge, want the 2 lifecycle ones", info.State.Msgs)
	}
}

func waitMsgs(t *testing.T, s jetstream.Stream, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := s.Info(context.Background())
		if err == nil && info.State.Msgs >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("history stream has %v messages, want %d (%v)", info.State.Msgs, n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
