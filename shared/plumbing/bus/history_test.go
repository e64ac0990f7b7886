package bus_test

import (
	"context"
	"fmt"
	"strings"
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

// --events-max-bytes and --history-max-bytes cap the two streams on disk,
// dropping their oldest events; without them the streams have no cap.
func TestEventStreamsKeepTheirByteCaps(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const limit = 1 << 20
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{EventsMaxBytes: limit, HistoryMaxBytes: 2 * limit}); err != nil {
		t.Fatal(err)
	}
	evs, err := h.b.JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if got := evs.CachedInfo().Config.MaxBytes; got != limit {
		t.Fatalf("events max bytes = %d, want %d", got, limit)
	}
	// 1.5 MiB of events in 1 KiB reasons: the first ones must go.
	now := time.Now().UTC()
	reason := strings.Repeat("x", 1<<10)
	for i := range 1536 {
		ev := events.Event{Type: events.Conflict, JobID: fmt.Sprintf("j%d", i), Time: now, Attempt: 1, Reason: reason}
		if err := h.b.PublishEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	info, err := evs.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Bytes > limit || info.State.FirstSeq == 1 {
		t.Errorf("events hold %d bytes from seq %d, want at most %d with the oldest dropped", info.State.Bytes, info.State.FirstSeq, limit)
	}
	hist, err := h.b.JS.Stream(ctx, subjects.StreamHistory)
	if err != nil {
		t.Fatal(err)
	}
	if got := hist.CachedInfo().Config.MaxBytes; got != 2*limit {
		t.Errorf("history max bytes = %d, want %d", got, 2*limit)
	}
	// A later start without the flags lifts the caps.
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{subjects.StreamEvents, subjects.StreamHistory} {
		s, err := h.b.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Config.MaxBytes; got != -1 {
			t.Errorf("%s max bytes = %d after a start without a cap, want none (-1)", name, got)
		}
	}
}
