package jobs_test

import (
	"reflect"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Lookup reads what Get reads, revision included, without binding the
// bucket; a key never written, one deleted since, and one holding another
// job's record are what Get makes of them.
func TestLookupReadsWhatGetReads(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	js := env.Jobs(t)
	create(t, js, domain.Job{ID: "kept", State: domain.StatePending, Owner: "alice", Reason: "Resources"},
		domain.Job{ID: "gone", State: domain.StateSucceeded})
	if _, _, err := js.Update(ctx, "kept", func(j *domain.Job) (bool, error) { j.State = domain.StateRunning; return true, nil }); err != nil {
		t.Fatal(err)
	}
	kv, err := env.Bus.JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "other", []byte(`{"id":"kept","state":"running"}`)); err != nil {
		t.Fatal(err)
	}

	want, wantRev, err := js.Get(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	got, rev, err := jobs.Lookup(ctx, env.Bus.NC, "kept")
	if err != nil || rev != wantRev || !reflect.DeepEqual(got, want) {
		t.Errorf("Lookup(kept) = %+v at %d, %v; Get = %+v at %d", got, rev, err, want, wantRev)
	}
	for _, id := range []string{"never", "gone"} {
		if _, _, err := jobs.Lookup(ctx, env.Bus.NC, id); !errs.IsNotFound(err) {
			t.Errorf("Lookup(%s): %v, want not found", id, err)
		}
	}
	if _, _, err := jobs.Lookup(ctx, env.Bus.NC, "other"); err == nil || !errs.IsPermanent(err) {
		t.Errorf("Lookup of a record naming another job: %v, want a permanent error", err)
	}
	if _, _, err := jobs.Lookup(ctx, env.Bus.NC, "a.>"); err == nil || errs.IsNotFound(err) {
		t.Errorf("Lookup of a key that is a wildcard: %v, want an error", err)
	}
}
