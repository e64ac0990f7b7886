package domain_test

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// The pull phase is its own term of η: Run moves it out of scheduling
// latency, and Efficiency counts it.
func TestRunCountsPullApart(t *testing.T) {
	j := domain.Job{ID: "j", State: domain.StateReserved, Attempt: 1, PendingSince: at}
	pull := &domain.PullSummary{Took: 3 * time.Second, Slowest: "n2", SlowestTook: 2900 * time.Millisecond, Bytes: 12 << 20}
	if !j.Run(1, at.Add(5*time.Second), pull) {
		t.Fatal("Run changed nothing")
	}
	if j.Timing.Pull != 3*time.Second || j.Timing.SchedLatency != 2*time.Second || j.Pull == nil || j.Pull.Slowest != "n2" {
		t.Fatalf("timing %+v, pull %+v: want pull 3s apart from scheduling 2s", j.Timing, j.Pull)
	}
	j.Timing.Compute = 15 * time.Second
	if got := j.Timing.Efficiency(); got != 0.75 {
		t.Errorf("η = %v, want 15/(15+2+3) = 0.75", got)
	}
	bare := domain.Job{ID: "b", State: domain.StateReserved, Attempt: 1, PendingSince: at}
	bare.Run(1, at.Add(5*time.Second), nil)
	if bare.Timing.Pull != 0 || bare.Timing.SchedLatency != 5*time.Second || bare.Pull != nil {
		t.Errorf("a job without a container: timing %+v, pull %+v", bare.Timing, bare.Pull)
	}
}

// The summary names the slowest node, its time and the image's size; the
// phase runs from the reservation to when gang saw the last node.
func TestPullSummary(t *testing.T) {
	p := &domain.PullPhase{Image: "p", Timeout: time.Minute, DoneAt: at.Add(1500 * time.Millisecond), Nodes: map[string]domain.NodePull{
		"n1": {Took: 200 * time.Millisecond, Bytes: 10}, "n2": {Took: 1200 * time.Millisecond, Bytes: 12 << 20, Pulled: true}}}
	got := p.Summary(at)
	want := domain.PullSummary{Took: 1500 * time.Millisecond, Slowest: "n2", SlowestTook: 1200 * time.Millisecond, Bytes: 12 << 20}
	if got == nil || *got != want {
		t.Errorf("Summary = %+v, want %+v", got, want)
	}
	p.DoneAt = time.Time{}
	if p.Summary(at) != nil || !p.Pending() {
		t.Error("a phase still pulling has no summary and is pending")
	}
	var none *domain.PullPhase
	if none.Pending() || none.Summary(at) != nil {
		t.Error("no phase is never pending")
	}
}
