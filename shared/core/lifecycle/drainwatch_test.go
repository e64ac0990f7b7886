package lifecycle_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

// Each case is what the watch holds of a drain's allocation, and the step
// and reason the drain takes.
func TestJudgeDrain(t *testing.T) {
	rec := domain.DrainRecord{JobID: "j", Attempt: 2, Drain: domain.Drain{RequestedAt: now.Add(-90 * time.Second), Deadline: now}}
	onTwo := domain.Allocation{JobID: "j", Attempt: 2, Placement: domain.Placement{Nodes: []domain.NodePlacement{{Node: "a"}, {Node: "b"}}}}
	exited := func(nodes ...string) domain.Allocation {
		a := onTwo
		a.Exited = map[string]int{}
		for _, n := range nodes {
			a.Exited[n] = 0
		}
		return a
	}
	other := onTwo
	other.Attempt = 3
	cases := []struct {
		name      string
		alloc     domain.Allocation
		found     bool
		malformed error
		at        time.Time
		step      lifecycle.DrainStep
		why       string
	}{
		{name: "ranks still checkpointing", alloc: onTwo, found: true, at: now, step: lifecycle.DrainWaits},
		{name: "some ranks exited", alloc: exited("a"), found: true, at: now, step: lifecycle.DrainWaits},
		{name: "every rank exited", alloc: exited("a", "b"), found: true, at: now, step: lifecycle.DrainEnds, why: "ranks exited"},
		{name: "grace ran out", alloc: exited("a", "b"), found: true, at: now.Add(time.Millisecond), step: lifecycle.DrainEnds,
			why: "grace period of 1m30s expired; ranks killed"},
		{name: "allocation gone", found: false, at: now.Add(time.Hour), step: lifecycle.DrainForget},
		{name: "another attempt", alloc: other, found: true, at: now.Add(time.Hour), step: lifecycle.DrainForget},
		{name: "malformed allocation", alloc: onTwo, found: true, malformed: errors.New("alloc/j: placement.nodes: empty"), at: now,
			step: lifecycle.DrainEnds, why: "allocation record malformed (alloc/j: placement.nodes: empty); ranks stopped"},
		{name: "malformed but not held is gone", malformed: errors.New("ignored"), at: now, step: lifecycle.DrainForget},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			step, why := lifecycle.JudgeDrain(rec, c.alloc, c.found, c.malformed, c.at)
			if step != c.step || why != c.why {
				t.Errorf("JudgeDrain = %d %q, want %d %q", step, why, c.step, c.why)
			}
		})
	}
}
