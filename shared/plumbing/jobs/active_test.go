package jobs_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Active holds exactly the unfinished records: those that existed before
// it started (after Ready) and those created later, with their current
// state and attempt; a record that finishes leaves it. With WithPending it
// holds the whole record of a pending job too, until it leaves pending.
func TestActiveFollowsUnfinishedRecords(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context() // cancelled when the test ends, stopping what follows it
	js := env.Jobs(t)
	create(t, js,
		domain.Job{ID: "old-running", State: domain.StateRunning, Attempt: 2, TraceParent: "tp"},
		domain.Job{ID: "old-done", State: domain.StateSucceeded, Attempt: 1},
	)
	a := js.Active(ctx, slog.Default(), jobs.WithPending())
	select {
	case <-a.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("Active never became ready")
	}
	want := map[string]domain.JobBrief{"old-running": {ID: "old-running", State: domain.StateRunning, Attempt: 2, TraceParent: "tp"}}
	if got := a.Snapshot(); !equal(got, want) {
		t.Fatalf("after replay: %+v, want %+v", got, want)
	}

	create(t, js, domain.Job{ID: "new", State: domain.StatePending, Attempt: 1})
	finish := func(j *domain.Job) (bool, error) { j.State = domain.StateFailed; return true, nil }
	if _, _, err := js.Update(ctx, "old-running", finish); err != nil {
		t.Fatal(err)
	}
	want = map[string]domain.JobBrief{"new": {ID: "new", State: domain.StatePending, Attempt: 1}}
	deadline := time.Now().Add(10 * time.Second)
	for got := a.Snapshot(); !equal(got, want); got = a.Snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("after updates: %+v, want %+v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if j, rev, ok := a.Pending("new"); !ok || j.ID != "new" || rev == 0 {
		t.Fatalf("Pending(new) = %+v, %d, %v", j, rev, ok)
	}
	if _, _, ok := a.Pending("old-running"); ok {
		t.Fatal("Pending holds a job that is not pending")
	}
	reserve := func(j *domain.Job) (bool, error) { j.State = domain.StateReserved; return true, nil }
	if _, _, err := js.Update(ctx, "new", reserve); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, _, ok := a.Pending("new"); ok {
			return errors.New("a reserved job is still held as pending")
		}
		return nil
	})
}

func equal(a, b map[string]domain.JobBrief) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
