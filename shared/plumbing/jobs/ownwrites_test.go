package jobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Through a real watch: the follower of the Store that wrote a record gets
// its brief with the entry, equal to what the value decodes to; a record
// another Store wrote comes without one.
func TestTheFollowerGetsTheBriefsOfItsStoresWrites(t *testing.T) {
	ctx := t.Context()
	mine, other, sink := followingStores(t)
	select {
	case <-sink.current:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch never became current")
	}
	// await takes the next entry and checks it: its name (key@state), and
	// a brief, equal to what the value decodes to, exactly when own.
	await := func(name string, own bool) {
		t.Helper()
		select {
		case e := <-sink.entries:
			var decoded domain.JobBrief
			if err := jobs.DecodeInto(e.Key, e.Value, &decoded, &decoded.ID); err != nil {
				t.Fatal(err)
			}
			if got := e.Key + "@" + string(decoded.State); got != name {
				t.Fatalf("entry %s, want %s", got, name)
			}
			if got := e.Own != nil; got != own {
				t.Errorf("%s: brief given %v, want %v", name, got, own)
			}
			if e.Own != nil && *e.Own != decoded {
				t.Errorf("%s: brief %+v, the value decodes to %+v", name, *e.Own, decoded)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not delivered", name)
		}
	}

	if err := mine.Create(ctx, domain.Job{ID: "mine", State: domain.StatePending, Attempt: 1, Owner: "alice", TraceParent: "tp"}); err != nil {
		t.Fatal(err)
	}
	// Once the watch has delivered a write made after it began, it
	// delivers every later one. Before, the server may still apply the
	// watch's start (each key's last value) to the writes made meanwhile:
	// on a loaded machine a key written twice then came at its second
	// value only.
	await("mine@pending", true)
	if err := other.Create(ctx, domain.Job{ID: "other", State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mine.Update(ctx, "other", func(j *domain.Job) (bool, error) {
		j.State = domain.StateReserved
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	await("other@pending", false)
	await("other@reserved", true)
}

// followingStores is two Stores of one bucket, mine followed as Active
// follows (FollowOwn) into the returned sink until the test ends.
func followingStores(t *testing.T) (mine, other *jobs.Store, sink *chanSink) {
	env := testenv.Start(t)
	mine, other = env.Jobs(t), env.Jobs(t)
	sink = &chanSink{entries: make(chan jobs.Entry, 16), current: make(chan struct{}, 1)}
	mine.FollowOwn(t.Context(), slog.Default(), sink)
	return mine, other, sink
}

// chanSink hands entries to a channel and says when the watch is current.
type chanSink struct {
	entries chan jobs.Entry
	current chan struct{}
}

func (c *chanSink) Replay()            {}
func (c *chanSink) Apply(e jobs.Entry) { c.entries <- e }
func (c *chanSink) Current() {
	select {
	case c.current <- struct{}{}:
	default:
	}
}

// A write that failed leaves no brief behind: nothing would ever take it
// (the key's next value is someone else's, or there is none).
func TestFailedWritesLeaveNoBrief(t *testing.T) {
	ctx := t.Context()
	mine, other, _ := followingStores(t)
	if err := other.Create(ctx, domain.Job{ID: "x", State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := mine.Create(ctx, domain.Job{ID: "x", State: domain.StatePending, Attempt: 1}); err == nil {
		t.Fatal("a second create of x succeeded")
	}
	if n := mine.OwnWritesKept(); n != 0 {
		t.Fatalf("after a create that failed: %d briefs kept, want 0", n)
	}
	j, rev, err := mine.Get(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := mine.UpdateFrom(gone, j, rev, func(j *domain.Job) (bool, error) {
		j.State = domain.StateReserved
		return true, nil
	}); err == nil {
		t.Fatal("an update with a cancelled context succeeded")
	}
	if n := mine.OwnWritesKept(); n != 0 {
		t.Fatalf("after an update that failed: %d briefs kept, want 0", n)
	}
}
