package lifecycle_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

// pulling is a container gang on nodes reserved a second ago, in its pull
// phase until deadline, with the given nodes already pulled.
func pulling(deadline time.Time, pulled []string, nodes ...string) domain.Allocation {
	a := reserving(gangOn("c", 1, nodes...), deadline.Add(time.Minute))
	a.ReservedAt = now.Add(-time.Second)
	a.Pull = &domain.PullPhase{Image: "probe:v1", Timeout: 10 * time.Minute, Deadline: deadline, Nodes: map[string]domain.NodePull{}}
	for _, n := range pulled {
		a.Pull.Nodes[n] = domain.NodePull{Took: time.Second, Bytes: 1 << 20}
	}
	return a
}

func TestJudgePull(t *testing.T) {
	inTime, late := now.Add(time.Minute), now.Add(-time.Second)
	done := pulling(inTime, []string{"n0", "n1"}, "n0", "n1")
	done.Pull.DoneAt = now.Add(-time.Millisecond)
	bare := reserving(gangOn("b", 1, "n0"), inTime)
	running := pulling(inTime, nil, "n0")
	running.State = domain.AllocRunning
	cases := []struct {
		name   string
		a      domain.Allocation
		failed []lifecycle.PullFailure
		want   lifecycle.PullVerdict
	}{
		{"all pulled → start", pulling(inTime, []string{"n0", "n1"}, "n0", "n1"), nil, lifecycle.PullVerdict{Step: lifecycle.PullStart}},
		{"all pulled, late → start anyway", pulling(late, []string{"n0", "n1"}, "n0", "n1"), nil, lifecycle.PullVerdict{Step: lifecycle.PullStart}},
		{"one still pulling → wait", pulling(inTime, []string{"n0"}, "n0", "n1"), nil, lifecycle.PullVerdict{Step: lifecycle.PullWait}},
		{"none yet → wait", pulling(inTime, nil, "n0", "n1"), nil, lifecycle.PullVerdict{Step: lifecycle.PullWait}},
		{"one failed → fail with the engine's message", pulling(inTime, []string{"n0"}, "n0", "n1"),
			[]lifecycle.PullFailure{{Node: "n1", Message: "pull access denied for probe"}},
			lifecycle.PullVerdict{Step: lifecycle.PullFail, Reason: "ImagePullFailed: image probe:v1 on node n1: pull access denied for probe"}},
		{"a failure wins over every other node pulled", pulling(inTime, []string{"n0", "n1"}, "n0", "n1"),
			[]lifecycle.PullFailure{{Node: "n0", Message: "no space left on device"}},
			lifecycle.PullVerdict{Step: lifecycle.PullFail, Reason: "ImagePullFailed: image probe:v1 on node n0: no space left on device"}},
		{"deadline passed → fail naming the nodes without it", pulling(late, []string{"n0"}, "n0", "n1", "n2"), nil,
			lifecycle.PullVerdict{Step: lifecycle.PullFail, Reason: "PullTimeout: image probe:v1 was not on 2 of 3 nodes (n1, n2) within pullTimeout 10m0s of the reservation"}},
		{"phase over → nothing", done, nil, lifecycle.PullVerdict{Step: lifecycle.PullNone}},
		{"no container → nothing", bare, nil, lifecycle.PullVerdict{Step: lifecycle.PullNone}},
		{"past the barrier → nothing", running, nil, lifecycle.PullVerdict{Step: lifecycle.PullNone}},
	}
	for _, c := range cases {
		if got := lifecycle.JudgePull(c.a, c.failed, now); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The reconciler applies the pull deadline while a gang pulls, and the
// launch deadline (which starts after the pull) only afterwards.
func TestJudgeAllocationPullPhase(t *testing.T) {
	inTime, late := now.Add(time.Minute), now.Add(-time.Second)
	up := map[string]bool{"n0": true, "n1": true}
	reserved := brief("c", domain.StateReserved, 1)

	slow := pulling(late, []string{"n0"}, "n0", "n1")
	want := lifecycle.FailPull{Alloc: slow, Reason: "PullTimeout: image probe:v1 was not on 1 of 2 nodes (n1) within pullTimeout 10m0s of the reservation"}
	if got := lifecycle.JudgeAllocation(slow, reserved, true, up, now); !reflect.DeepEqual(got, want) {
		t.Errorf("past the pull deadline: got %#v, want %#v", got, want)
	}
	// Still pulling in time, though a launch deadline as short as the
	// launch timeout would have passed: left alone.
	early := pulling(inTime, nil, "n0", "n1")
	early.LaunchDeadline = late
	if got := lifecycle.JudgeAllocation(early, reserved, true, up, now); got != nil {
		t.Errorf("pulling in time: got %#v, want nothing", got)
	}
	// A node lost while pulling requeues, as for any reserved gang.
	if got := lifecycle.JudgeAllocation(early, reserved, true, map[string]bool{"n0": true}, now); !reflect.DeepEqual(got, lifecycle.Requeue{Alloc: early, Reason: "node n1 lost"}) {
		t.Errorf("node lost while pulling: got %#v", got)
	}
	// Pulled: the launch deadline applies again.
	pulled := pulling(inTime, []string{"n0", "n1"}, "n0", "n1")
	pulled.Pull.DoneAt, pulled.LaunchDeadline = now.Add(-time.Minute), late
	if got := lifecycle.JudgeAllocation(pulled, reserved, true, up, now); !reflect.DeepEqual(got, lifecycle.LaunchTimeout{Alloc: pulled}) {
		t.Errorf("pulled, launch deadline passed: got %#v", got)
	}
}
