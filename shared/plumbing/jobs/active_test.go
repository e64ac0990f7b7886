package jobs_test

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
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

// A record under another job's key (a bad restore, a hand edit) is no
// record of the key's job: Get refuses it, for good, and Active leaves it
// out, so that no service lends the other job's owner, state or attempt to
// the key's.
func TestARecordUnderAnotherJobsKeyIsRefused(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	js := env.Jobs(t)
	kv, err := env.Bus.JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(domain.Job{ID: "victim", State: domain.StateRunning, Attempt: 1, Owner: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "impostor", raw); err != nil {
		t.Fatal(err)
	}
	if _, _, err := js.Get(ctx, "impostor"); err == nil || !errs.IsPermanent(err) {
		t.Errorf("Get of a record naming another job: %v, want a permanent error", err)
	}
	create(t, js, domain.Job{ID: "honest", State: domain.StateRunning, Attempt: 1})
	a := js.Active(ctx, slog.Default())
	select {
	case <-a.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("Active never became ready")
	}
	want := map[string]domain.JobBrief{"honest": {ID: "honest", State: domain.StateRunning, Attempt: 1}}
	if got := a.Snapshot(); !equal(got, want) {
		t.Errorf("Active holds %+v, want %+v", got, want)
	}
}
