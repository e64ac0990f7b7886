package bus_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// Every service declares every stream at each start. A stream already as
// wanted is left alone: the server, which stores its own defaults in the
// place of what the configuration leaves at zero, must not look different
// from what was asked. One changed by hand, or asked for differently, is
// updated, and only that one.
func TestEnsureStreamsUpdatesOnlyWhatDiffers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	watch, err := nats.Connect(h.env.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var mu sync.Mutex
	var writes []string
	marked := make(chan struct{}, 1)
	// One subscription: one goroutine sees the JetStream API requests and
	// the marks in the order the connection received them.
	sub, err := watch.Subscribe(">", func(m *nats.Msg) {
		if m.Subject == "test.mark" {
			marked <- struct{}{}
			return
		}
		for _, op := range []string{"CREATE", "UPDATE"} {
			if name, ok := strings.CutPrefix(m.Subject, "$JS.API.STREAM."+op+"."); ok {
				mu.Lock()
				writes = append(writes, op+" "+name)
				mu.Unlock()
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	// caughtUp returns once every request the services' connection sent so
	// far has been seen: one connection's messages arrive in order.
	caughtUp := func() {
		t.Helper()
		if err := h.b.NC.Publish("test.mark", nil); err != nil {
			t.Fatal(err)
		}
		select {
		case <-marked:
		case <-time.After(10 * time.Second):
			t.Fatal("mark not seen")
		}
	}
	ensure := func(o bus.StreamOptions) []string {
		t.Helper()
		caughtUp()
		mu.Lock()
		writes = nil
		mu.Unlock()
		if err := h.b.EnsureStreams(ctx, o); err != nil {
			t.Fatal(err)
		}
		caughtUp()
		mu.Lock()
		defer mu.Unlock()
		sort.Strings(writes)
		return append([]string(nil), writes...)
	}

	// testenv declared them already, with these options.
	if got := ensure(bus.StreamOptions{}); len(got) != 0 {
		t.Errorf("streams already as wanted were written: %v", got)
	}
	logs, err := h.b.JS.Stream(ctx, subjects.StreamLogs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := logs.CachedInfo().Config
	cfg.MaxAge = time.Hour
	if _, err := h.b.JS.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if got := ensure(bus.StreamOptions{}); len(got) != 1 || got[0] != "UPDATE "+subjects.StreamLogs {
		t.Errorf("after a hand edit of %s: writes %v, want its update alone", subjects.StreamLogs, got)
	}
	if logs, err = h.b.JS.Stream(ctx, subjects.StreamLogs); err != nil || logs.CachedInfo().Config.MaxAge != 72*time.Hour {
		t.Errorf("%s max age after the update: err %v, want 72h", subjects.StreamLogs, err)
	}
	if got := ensure(bus.StreamOptions{HistoryAge: 48 * time.Hour}); len(got) != 1 || got[0] != "UPDATE "+subjects.StreamHistory {
		t.Errorf("another history age: writes %v, want the history's update alone", got)
	}
	if got := ensure(bus.StreamOptions{HistoryAge: 48 * time.Hour}); len(got) != 0 {
		t.Errorf("the same options again: writes %v, want none", got)
	}
}
