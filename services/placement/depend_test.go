package placement

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/depend"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// The mirror the gate reads: records follow the jobs watch (active, then
// ended, then deleted), and an unknown dependency ends a job only once the
// replay is complete.
func TestDependencyGateFollowsTheRecords(t *testing.T) {
	s := &scheduler{active: map[string]*seenJob{}, ended: map[string]depend.Job{}, kick: make(chan struct{}, 1)}
	sink := jobSink{s}
	put := func(j domain.Job) {
		raw, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		sink.Apply(jobs.Entry{Key: j.ID, Value: raw})
	}
	job := func(id string, st domain.State, deps ...jobspec.Dependency) domain.Job {
		return domain.Job{ID: id, State: st, Attempt: 1, Owner: "alice",
			Spec: jobspec.Spec{Name: id, Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1}, Command: []string{"x"}, Dependencies: deps}}
	}
	b := job("b", domain.StatePending, jobspec.Dependency{Type: jobspec.DependAfterOK, Jobs: []string{"a"}})
	decide := func() depend.Verdict {
		g := dependencyGate{s: s, now: b.SubmittedAt}
		return g.decide(b).Verdict
	}

	sink.Replay()
	if v := decide(); v != depend.Wait {
		t.Errorf("while replaying, an unknown dependency waits: %v", v)
	}
	sink.Current()
	s.cfg.DependencyGrace = time.Minute
	if v := decide(); v != depend.Wait {
		t.Errorf("within the grace after its submission, an unknown dependency waits: %v", v)
	}
	s.cfg.DependencyGrace = 0
	if v := decide(); v != depend.Never {
		t.Errorf("once current, an unknown dependency never holds: %v", v)
	}
	put(job("a", domain.StateRunning))
	if v := decide(); v != depend.Wait {
		t.Errorf("a running: %v", v)
	}
	put(job("a", domain.StateSucceeded))
	if _, ok := s.ended["a"]; !ok || len(s.active) != 0 {
		t.Fatalf("a finished is not mirrored as ended: active %v ended %v", s.active, s.ended)
	}
	if v := decide(); v != depend.Ready {
		t.Errorf("a succeeded: %v", v)
	}
	sink.Apply(jobs.Entry{Key: "a", Deleted: true})
	if v := decide(); v != depend.Never || len(s.ended) != 0 {
		t.Errorf("a deleted: %v, ended %v", v, s.ended)
	}
	if g := (dependencyGate{s: s}); g.decide(job("free", domain.StatePending)).Verdict != depend.Ready {
		t.Error("a job without dependencies is held")
	}
}

// A dependency on an array's ID reads its tasks' records (the array has
// none of its own): it holds once every task has.
func TestDependencyGateOnAnArray(t *testing.T) {
	s := &scheduler{active: map[string]*seenJob{}, ended: map[string]depend.Job{}, kick: make(chan struct{}, 1)}
	sink := jobSink{s}
	sink.Current()
	put := func(id string, st domain.State) {
		raw, err := json.Marshal(domain.Job{ID: id, State: st, Attempt: 1, Owner: "alice",
			Spec: jobspec.Spec{Name: id, Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1}, Command: []string{"x"}}})
		if err != nil {
			t.Fatal(err)
		}
		sink.Apply(jobs.Entry{Key: id, Value: raw})
	}
	next := domain.Job{ID: "next", State: domain.StatePending, Owner: "alice",
		Spec: jobspec.Spec{Dependencies: []jobspec.Dependency{{Type: jobspec.DependAfterOK, Jobs: []string{"sweep"}}}}}
	decide := func() depend.Decision { return (&dependencyGate{s: s}).decide(next) }

	put("sweep_0", domain.StateSucceeded)
	put("sweep_1", domain.StateRunning)
	if d := decide(); d.Verdict != depend.Wait || d.Detail != "waiting for afterok:sweep" {
		t.Errorf("one task running: %+v", d)
	}
	put("sweep_1", domain.StateSucceeded)
	if d := decide(); d.Verdict != depend.Ready {
		t.Errorf("every task succeeded: %+v", d)
	}
	put("sweep_2", domain.StateFailed)
	if d := decide(); d.Verdict != depend.Never {
		t.Errorf("a task failed: %+v", d)
	}
}

// A record under another job's key (a bad restore, a hand edit) is left
// out: filed under its own ID it would stand in for that job, whose
// record a decision on it (a dependency never satisfied) would change.
func TestARecordUnderAnotherJobsKeyIsSkipped(t *testing.T) {
	s := &scheduler{Started: &config.Started{Log: slog.New(slog.DiscardHandler)}, active: map[string]*seenJob{}, ended: map[string]depend.Job{},
		usage: map[string]queue.UsageRecord{}, finished: queue.NewUsageLedger(0), folded: map[string]bool{}, kick: make(chan struct{}, 1)}
	raw, err := json.Marshal(domain.Job{ID: "victim", State: domain.StatePending, Attempt: 1,
		Spec: jobspec.Spec{Name: "x", Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1}, Command: []string{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.jobChanged(jobs.Entry{Key: "impostor", Value: raw})
	if len(s.active) != 0 || len(s.ended) != 0 {
		t.Errorf("a record under another job's key was mirrored: active %v, ended %v", s.active, s.ended)
	}
}
