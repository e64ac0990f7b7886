package jobs_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// recorder is a Sink that writes down what Follow hands it.
type recorder struct {
	mu      sync.Mutex
	calls   []string // "replay", "current", or the key of an entry ("-key" when deleted)
	replays int
}

func (r *recorder) Replay()  { r.add("replay") }
func (r *recorder) Current() { r.add("current") }
func (r *recorder) Apply(e jobs.Entry) {
	if e.Deleted {
		r.add("-" + e.Key)
		return
	}
	r.add(e.Key)
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
	if s == "replay" {
		r.replays++
	}
}

func (r *recorder) seen() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls), r.replays
}

// Follow replays the bucket (markers included) between Replay and
// Current, then hands over live changes in order.
func TestFollowReplaysThenFollows(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context() // cancelled when the test ends, stopping what follows it
	js := env.Jobs(t)
	create(t, js, domain.Job{ID: "a", State: domain.StatePending}, domain.Job{ID: "b", State: domain.StatePending})
	deleteRecord(t, js, "b")
	r := &recorder{}
	go js.Follow(ctx, testenv.FailureLog(t), r)
	want := []string{"replay", "a", "-b", "current"}
	waitFor(t, r, want)
	create(t, js, domain.Job{ID: "c", State: domain.StatePending})
	waitFor(t, r, append(want, "c"))
}

// A watch that has delivered everything is not stalled, even when the
// bucket's latest revision is a delete marker purged since (a retention
// sweep): no entry the watch can deliver carries that revision. The
// watchdog must not restart such a watch over and over.
func TestFollowIsNotStalledByAPurgedMarker(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context() // cancelled when the test ends, stopping what follows it
	js := env.Jobs(t)
	create(t, js, domain.Job{ID: "kept", State: domain.StateSucceeded}, domain.Job{ID: "gone", State: domain.StateSucceeded})
	marker := deleteRecord(t, js, "gone")
	if res, err := js.Apply(ctx, jobs.SweepPlan{Purge: []jobs.Entry{marker}}); err != nil || res.Purged != 1 {
		t.Fatalf("purge = %+v, %v", res, err)
	}
	r := &recorder{}
	go js.Follow(ctx, testenv.FailureLog(t), r)
	waitFor(t, r, []string{"replay", "kept", "current"})
	time.Sleep(jobs.WatchStall + 2*time.Second) // what would make the watchdog fire
	if calls, n := r.seen(); n != 1 {
		t.Fatalf("the watch was restarted: %v", calls)
	}
}

// create writes new job records.
func create(t *testing.T, js *jobs.Store, records ...domain.Job) {
	t.Helper()
	for _, j := range records {
		if err := js.Create(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
}

// deleteRecord deletes a record as a sweep does and returns its marker.
func deleteRecord(t *testing.T, js *jobs.Store, id string) jobs.Entry {
	t.Helper()
	ctx := context.Background()
	find := func() (found jobs.Entry) {
		if err := js.Scan(ctx, func(e jobs.Entry) error {
			if e.Key == id {
				found = e
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return found
	}
	if res, err := js.Apply(ctx, jobs.SweepPlan{Delete: []jobs.Entry{find()}}); err != nil || res.Deleted != 1 {
		t.Fatalf("delete %s = %+v, %v", id, res, err)
	}
	marker := find()
	if !marker.Deleted {
		t.Fatalf("no delete marker for %s: %+v", id, marker)
	}
	return marker
}

func waitFor(t *testing.T, r *recorder, want []string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() error {
		if got, _ := r.seen(); !slices.Equal(got, want) {
			return errors.Newf("sink saw %v, want %v", got, want)
		}
		return nil
	})
}
