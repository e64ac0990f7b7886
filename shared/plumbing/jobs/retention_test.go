package jobs_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func entry(t *testing.T, j domain.Job, rev uint64, written time.Time) jobs.Entry {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return jobs.Entry{Key: j.ID, Revision: rev, Created: written, Value: b}
}

// PlanSweep removes only final records past the age (from their end, or
// their last write if later), records naming another job than their key
// (which no service writes) past the age of their last write, oldest
// first within the limit, and markers past theirs; nothing unfinished or
// undecodable is ever removed.
func TestPlanSweep(t *testing.T) {
	now := time.Date(2030, 1, 8, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	old, older, recent := now.Add(-8*day), now.Add(-9*day), now.Add(-day)
	entries := []jobs.Entry{
		entry(t, domain.Job{ID: "done", State: domain.StateSucceeded, EndedAt: old}, 1, old),
		entry(t, domain.Job{ID: "done-earlier", State: domain.StateCancelled, EndedAt: older}, 2, older),
		entry(t, domain.Job{ID: "rejected", State: domain.StateRejected, EndedAt: old}, 3, old),
		entry(t, domain.Job{ID: "ended-recently", State: domain.StateFailed, EndedAt: recent}, 4, recent),
		entry(t, domain.Job{ID: "rewritten-recently", State: domain.StateFailed, EndedAt: old}, 5, recent),
		entry(t, domain.Job{ID: "no-end-time", State: domain.StateTimeout}, 6, old),
		entry(t, domain.Job{ID: "pending", State: domain.StatePending, SubmittedAt: older}, 7, older),
		entry(t, domain.Job{ID: "running", State: domain.StateRunning}, 8, older),
		entry(t, domain.Job{ID: "not-its-key", State: domain.StateSucceeded, EndedAt: old}, 9, old),
		entry(t, domain.Job{ID: "not-its-key-either", State: domain.StatePending}, 13, recent),
		{Key: "garbage", Revision: 10, Created: older, Value: []byte("{not json")},
		{Key: "old-marker", Revision: 11, Created: now.Add(-2 * time.Hour), Deleted: true},
		{Key: "new-marker", Revision: 12, Created: now.Add(-time.Minute), Deleted: true},
	}
	entries[8].Key = "someone-else"
	entries[9].Key = "someone-else-recent"
	keys := func(es []jobs.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Key)
		}
		return out
	}
	p := jobs.RetentionPolicy{Age: 7 * day, MarkerAge: time.Hour}
	plan := jobs.PlanSweep(entries, now, p)
	if got, want := keys(plan.Delete), []string{"done-earlier", "done", "no-end-time", "rejected", "someone-else"}; !reflect.DeepEqual(got, want) {
		t.Errorf("delete %v, want %v", got, want)
	}
	if got, want := keys(plan.Purge), []string{"old-marker"}; !reflect.DeepEqual(got, want) {
		t.Errorf("purge %v, want %v", got, want)
	}
	p.Limit = 2
	if got, want := keys(jobs.PlanSweep(entries, now, p).Delete), []string{"done-earlier", "done"}; !reflect.DeepEqual(got, want) {
		t.Errorf("limited delete %v, want %v", got, want)
	}
}

// Against a real bucket, with a short age: finished records go, their
// markers go later, and unfinished records stay. A record rewritten
// between the read and the delete is not lost, nor is a record created
// again after its marker was planned for purging.
func TestSweepRemovesFinishedRecords(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	js := env.Jobs(t)
	kv, err := env.Bus.JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	create(t, js,
		domain.Job{ID: "done", State: domain.StateSucceeded, EndedAt: start},
		domain.Job{ID: "raced", State: domain.StateFailed, EndedAt: start},
		domain.Job{ID: "pending", State: domain.StatePending},
		domain.Job{ID: "running", State: domain.StateRunning},
	)
	p := jobs.RetentionPolicy{Age: time.Second, MarkerAge: time.Minute}
	later := time.Now().Add(5 * time.Second)

	// "raced" changes after the sweep read it (as a late write would).
	var entries []jobs.Entry
	if err := js.Scan(ctx, func(e jobs.Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	plan := jobs.PlanSweep(entries, later, p)
	if len(plan.Delete) != 2 {
		t.Fatalf("plan deletes %d records, want done and raced", len(plan.Delete))
	}
	if _, _, err := js.Update(ctx, "raced", func(j *domain.Job) (bool, error) { j.Reason = "late"; return true, nil }); err != nil {
		t.Fatal(err)
	}
	res, err := js.Apply(ctx, plan)
	if err != nil || res != (jobs.SweepResult{Deleted: 1, Changed: 1}) {
		t.Fatalf("apply = %+v, %v; want one deleted, one changed", res, err)
	}
	present := func(want ...string) {
		t.Helper()
		lister, err := kv.ListKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for k := range lister.Keys() {
			got[k] = true
		}
		if len(got) != len(want) {
			t.Errorf("keys %v, want %v", got, want)
		}
		for _, k := range want {
			if !got[k] {
				t.Errorf("keys %v, want %v", got, want)
			}
		}
	}
	present("raced", "pending", "running")
	if j, _, err := js.Get(ctx, "raced"); err != nil || j.Reason != "late" {
		t.Errorf("raced record %+v, %v: the late write must survive", j, err)
	}

	// Next sweep: "raced" goes now; the marker of "done" is young.
	res, err = js.Sweep(ctx, later, p)
	if err != nil || res != (jobs.SweepResult{Deleted: 1}) {
		t.Fatalf("second sweep = %+v, %v", res, err)
	}
	present("pending", "running")

	// Markers past their age are purged; a record created again under
	// "done" after its marker was planned survives the purge.
	entries = entries[:0]
	if err := js.Scan(ctx, func(e jobs.Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	plan = jobs.PlanSweep(entries, later.Add(time.Hour), p)
	if len(plan.Purge) != 2 || len(plan.Delete) != 0 {
		t.Fatalf("plan %+v: want the two markers purged and nothing deleted", plan)
	}
	create(t, js, domain.Job{ID: "done", State: domain.StatePending})
	if res, err := js.Apply(ctx, plan); err != nil || res.Purged != 2 {
		t.Fatalf("purge = %+v, %v", res, err)
	}
	present("done", "pending", "running")
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Values(); n != 3 {
		t.Errorf("bucket holds %d messages, want the 3 records (markers purged)", n)
	}
}
