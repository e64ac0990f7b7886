package web

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// A replica keeps an unfinished job's whole record, and of a finished one
// only what the cluster page shows; retention's delete drops either.
func TestStateKeepsOnlyABriefOfFinishedJobs(t *testing.T) {
	s := newState(nil, slog.New(slog.DiscardHandler), newHub())
	put := func(j domain.Job) {
		raw, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		s.applyJob(slog.New(slog.DiscardHandler), jobs.Entry{Key: j.ID, Value: raw})
	}
	now := time.Now().UTC()
	j := runningJob("train-1", "alice", "n1", now.Add(-time.Hour))
	put(j)
	if _, ok := s.job("train-1"); !ok || len(s.endedList()) != 0 {
		t.Fatalf("running job: record kept %v, briefs %v", ok, s.endedList())
	}
	j.State, j.EndedAt, j.Timing.Compute = domain.StateSucceeded, now, time.Hour
	put(j)
	if _, ok := s.job("train-1"); ok {
		t.Error("a finished job's whole record is still kept")
	}
	if got := s.endedList(); len(got) != 1 || got[0].State != domain.StateSucceeded || got[0].Timing.Compute != time.Hour || got[0].Queue != j.Spec.Queue {
		t.Errorf("brief of the finished job: %+v", got)
	}
	s.applyJob(slog.New(slog.DiscardHandler), jobs.Entry{Key: "train-1", Deleted: true})
	if len(s.endedList()) != 0 || len(s.jobList()) != 0 {
		t.Errorf("a deleted record is still kept: %v, %v", s.endedList(), s.jobList())
	}
}
