package drain

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

func record(t *testing.T, id string, state domain.State, compute time.Duration) jobs.Entry {
	t.Helper()
	raw, err := json.Marshal(domain.Job{ID: id, State: state, Timing: domain.Timing{Compute: compute}})
	if err != nil {
		t.Fatal(err)
	}
	return jobs.Entry{Key: id, Value: raw}
}

// A finished job's timing is counted once however often the watch
// replays its record, and once retention deletes the record its ID is no
// longer remembered (its timing still counted).
func TestRunningJobsCountsAFinishedJobOnceAndForgetsItWhenDeleted(t *testing.T) {
	r := newRunningJobs()
	r.apply(record(t, "a", domain.StateRunning, 0))
	if got := len(r.snapshot()); got != 1 {
		t.Fatalf("running job not mirrored: %d jobs", got)
	}
	for range 3 { // the record written once, then replayed twice
		r.apply(record(t, "a", domain.StateSucceeded, time.Minute))
	}
	if got := len(r.snapshot()); got != 0 {
		t.Errorf("finished job still mirrored as active: %d jobs", got)
	}
	if r.endedTiming.Compute != time.Minute {
		t.Errorf("compute of finished jobs = %s, want 1m0s (counted once)", r.endedTiming.Compute)
	}

	r.apply(jobs.Entry{Key: "a", Deleted: true})
	if len(r.ended) != 0 {
		t.Errorf("deleted record still remembered: %v", r.ended)
	}
	if r.endedTiming.Compute != time.Minute {
		t.Errorf("deleting the record changed the total: %s", r.endedTiming.Compute)
	}
	// A new job under the freed ID is a new job: it counts too.
	r.apply(record(t, "a", domain.StateFailed, time.Second))
	if r.endedTiming.Compute != time.Minute+time.Second {
		t.Errorf("compute after a new job under the same ID = %s, want 1m1s", r.endedTiming.Compute)
	}
}

// A record that does not decode, or names another job than its key, is
// left out rather than mirrored or counted.
func TestRunningJobsSkipsARecordThatIsNotItsKeys(t *testing.T) {
	r := newRunningJobs()
	r.apply(record(t, "a", domain.StateRunning, 0))
	r.apply(jobs.Entry{Key: "a", Value: []byte("{not json")})
	if got := len(r.snapshot()); got != 0 {
		t.Errorf("undecodable record kept the job mirrored: %d jobs", got)
	}
	other := record(t, "b", domain.StateSucceeded, time.Hour)
	other.Key = "a"
	r.apply(other)
	if r.endedTiming.Compute != 0 || len(r.ended) != 0 {
		t.Errorf("a record under another job's key was counted: %s, %v", r.endedTiming.Compute, r.ended)
	}
}
