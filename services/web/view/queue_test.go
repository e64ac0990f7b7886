package view

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

var t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

func job(id string, state domain.State, prio, nodes, gpus int, submitted time.Time) domain.Job {
	return domain.Job{ID: id, State: state, SubmittedAt: submitted, PendingSince: submitted,
		Spec: jobspec.Spec{Name: id + "-name", Queue: "default", Priority: prio, Gang: jobspec.Gang{Nodes: nodes, GPUsPerNode: gpus, TasksPerNode: 1}}}
}

func TestBuildQueue(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	old := job("old", domain.StatePending, 0, 1, 1, t0)
	urgent := job("urgent", domain.StatePending, 5, 2, 8, t0.Add(5*time.Minute))
	urgent.Reason, urgent.Detail = "Resources", "16 GPUs wanted, 8 free; reservation starts ≈ 10:30"
	waiting := job("waiting", domain.StatePending, 0, 2, 8, t0.Add(time.Minute))
	waiting.Spec.Topology = jobspec.Topology{MaxSwitches: 1, WaitForSwitches: jobspec.DurationOf(15 * time.Minute)}
	run1 := job("run1", domain.StateRunning, 0, 1, 8, t0)
	run1.RunningAt = t0.Add(2 * time.Minute)
	run1.Placement = &domain.Placement{Leaves: []string{"leaf-1", "leaf-2"}}
	run2 := job("run2", domain.StateReserved, 0, 1, 4, t0)
	run2.ReservedAt = t0.Add(time.Minute)
	done := job("done", domain.StateSucceeded, 0, 1, 1, t0)

	q := BuildQueue(QueueInput{Jobs: []domain.Job{old, urgent, waiting, run1, run2, done}, Policy: queue.Config{}, Now: now})

	// Priority first; then, at equal priority, the size handicap puts the
	// 1-GPU job ahead of the 16-GPU one submitted after it.
	var order []string
	for _, r := range q.Pending {
		order = append(order, r.ID)
	}
	if want := []string{"urgent", "old", "waiting"}; !equal(order, want) {
		t.Fatalf("pending order %v, want %v", order, want)
	}
	u := q.Pending[0]
	if u.Pos != 1 || u.Reason != "Resources" || u.Detail != urgent.Detail || u.Shape != "2×8" || u.GPUs != 16 || u.Waited != "5m00s" || u.SwitchWait != "" {
		t.Errorf("urgent row %+v", u)
	}
	if o := q.Pending[1]; o.Reason != "(not yet considered)" || o.Waited != "10m00s" {
		t.Errorf("old row %+v", o)
	}
	if w := q.Pending[2]; w.SwitchWait != "≤ 6m00s of 15m00s" {
		t.Errorf("switch wait %q", w.SwitchWait)
	}
	if q.PendingGPUs != 33 || q.RunningGPUs != 12 {
		t.Errorf("GPUs pending %d running %d", q.PendingGPUs, q.RunningGPUs)
	}
	// Longest running first; a reserved job counts from its reservation.
	if len(q.Running) != 2 || q.Running[0].ID != "run2" || q.Running[0].Elapsed != "9m00s" || q.Running[1].Elapsed != "8m00s" || q.Running[1].Leaves != "leaf-1, leaf-2" {
		t.Errorf("running %+v", q.Running)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
