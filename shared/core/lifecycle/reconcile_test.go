package lifecycle_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// gangOn is attempt of job past its launch barrier, a rank on each node.
func gangOn(job string, attempt int, nodes ...string) domain.Allocation {
	a := domain.Allocation{JobID: job, Attempt: attempt, State: domain.AllocRunning, TraceParent: "tp-" + job}
	for i, n := range nodes {
		a.Placement.Nodes = append(a.Placement.Nodes, domain.NodePlacement{Node: n, NodeRank: i})
	}
	return a
}

// reserving is a, not past its launch barrier, due by deadline.
func reserving(a domain.Allocation, deadline time.Time) domain.Allocation {
	a.State, a.LaunchDeadline = domain.AllocReserved, deadline
	return a
}

func brief(job string, state domain.State, attempt int) domain.JobBrief {
	return domain.JobBrief{ID: job, State: state, Attempt: attempt, TraceParent: "tp-" + job}
}

func watched(bs ...domain.JobBrief) map[string]domain.JobBrief {
	out := map[string]domain.JobBrief{}
	for _, b := range bs {
		out[b.ID] = b
	}
	return out
}

func allocs(as ...domain.Allocation) []domain.Allocation { return as }

// unheld is what RequeueUnlessHeld names of a job: no placement.
func unheld(job string, attempt int) domain.Allocation {
	return domain.Allocation{JobID: job, Attempt: attempt, TraceParent: "tp-" + job}
}

const (
	reservationLost = "reservation lost: its lease expired before every rank was running"
	recordGone      = "allocation record of the running gang is gone; its claims and assignments were released"
)

// Each case is one pass's observation and the plan for it. Nodes n0 and n1
// are up, the others down, unless a case says otherwise.
func TestReconcile(t *testing.T) {
	late, inTime := now.Add(-time.Second), now.Add(time.Minute)
	bad1, bad2 := errors.New("alloc/a: no nodes"), errors.New("alloc/b: bad state")
	cases := []struct {
		name string
		in   lifecycle.ReconcileInput
		want []lifecycle.Action
	}{
		{name: "running gang with its record: nothing to do",
			in: lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0", "n1")), Active: watched(brief("j", domain.StateRunning, 1))}},
		{name: "allocation the watch has no record of: confirm before releasing",
			in:   lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0"))},
			want: []lifecycle.Action{lifecycle.ConfirmAllocation{Alloc: gangOn("j", 1, "n0")}}},
		{name: "allocation of another attempt than the watch's: confirm",
			in:   lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0")), Active: watched(brief("j", domain.StatePending, 2))},
			want: []lifecycle.Action{lifecycle.ConfirmAllocation{Alloc: gangOn("j", 1, "n0")}}},
		{name: "past its launch deadline",
			in: lifecycle.ReconcileInput{Allocs: allocs(reserving(gangOn("j", 1, "n0"), late)),
				Active: watched(brief("j", domain.StateReserved, 1))},
			want: []lifecycle.Action{lifecycle.LaunchTimeout{Alloc: reserving(gangOn("j", 1, "n0"), late)}}},
		{name: "past its launch deadline with the reservation never recorded",
			in: lifecycle.ReconcileInput{Allocs: allocs(reserving(gangOn("j", 1, "n0"), late)),
				Active: watched(brief("j", domain.StatePending, 1))},
			want: []lifecycle.Action{lifecycle.LaunchTimeout{Alloc: reserving(gangOn("j", 1, "n0"), late)}}},
		{name: "reservation being recorded is left alone, even on a node down",
			in: lifecycle.ReconcileInput{Allocs: allocs(reserving(gangOn("j", 1, "n0", "n2"), inTime)),
				Active: watched(brief("j", domain.StatePending, 1))}},
		{name: "reserved and in time: nothing to do",
			in: lifecycle.ReconcileInput{Allocs: allocs(reserving(gangOn("j", 1, "n0"), inTime)),
				Active: watched(brief("j", domain.StateReserved, 1))}},
		{name: "a node down: requeue naming it",
			in:   lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0", "n2")), Active: watched(brief("j", domain.StateRunning, 1))},
			want: []lifecycle.Action{lifecycle.Requeue{Alloc: gangOn("j", 1, "n0", "n2"), Reason: "node n2 lost"}}},
		{name: "several nodes down: the first in the placement is named",
			in:   lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n3", "n0", "n2")), Active: watched(brief("j", domain.StateRunning, 1))},
			want: []lifecycle.Action{lifecycle.Requeue{Alloc: gangOn("j", 1, "n3", "n0", "n2"), Reason: "node n3 lost"}}},
		{name: "past the barrier but recorded reserved: record it running",
			in:   lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0", "n1")), Active: watched(brief("j", domain.StateReserved, 1))},
			want: []lifecycle.Action{lifecycle.AnnounceRunning{Alloc: gangOn("j", 1, "n0", "n1")}}},
		{name: "past the barrier, recorded reserved, a node down: requeue only",
			in:   lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0", "n2")), Active: watched(brief("j", domain.StateReserved, 1))},
			want: []lifecycle.Action{lifecycle.Requeue{Alloc: gangOn("j", 1, "n0", "n2"), Reason: "node n2 lost"}}},
		{name: "reserved job without its allocation: requeue unless a re-read finds it",
			in:   lifecycle.ReconcileInput{Active: watched(brief("j", domain.StateReserved, 2))},
			want: []lifecycle.Action{lifecycle.RequeueUnlessHeld{Alloc: unheld("j", 2), Reason: reservationLost}}},
		{name: "running job without its allocation: the record was deleted",
			in:   lifecycle.ReconcileInput{Active: watched(brief("j", domain.StateRunning, 2))},
			want: []lifecycle.Action{lifecycle.RequeueUnlessHeld{Alloc: unheld("j", 2), Reason: recordGone}}},
		{name: "active job holding an older attempt's allocation",
			in: lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0")), Active: watched(brief("j", domain.StateRunning, 2))},
			want: []lifecycle.Action{lifecycle.ConfirmAllocation{Alloc: gangOn("j", 1, "n0")},
				lifecycle.RequeueUnlessHeld{Alloc: unheld("j", 2), Reason: recordGone}}},
		{name: "pending job without allocation is placement's",
			in: lifecycle.ReconcileInput{Active: watched(brief("j", domain.StatePending, 1))}},
		{name: "malformed records, by job",
			in:   lifecycle.ReconcileInput{Malformed: map[string]error{"b": bad2, "a": bad1}},
			want: []lifecycle.Action{lifecycle.DropMalformed{JobID: "a", Why: bad1}, lifecycle.DropMalformed{JobID: "b", Why: bad2}}},
		{name: "strays of a job the watch holds: the attempts before",
			in: lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 2, "n0")), Active: watched(brief("j", domain.StateRunning, 2)),
				Claims: []domain.Claim{claim("j", 1), claim("j", 2)}},
			want: []lifecycle.Action{lifecycle.SweepStrays{JobID: "j", UpTo: 1}}},
		{name: "strays of a job the watch lacks: confirm before sweeping",
			in: lifecycle.ReconcileInput{Allocs: allocs(gangOn("j", 1, "n0")),
				Assigns: []lifecycle.AssignKey{{Node: "n1", Job: "j"}, {Node: "n1", Job: "k"}}},
			want: []lifecycle.Action{lifecycle.ConfirmAllocation{Alloc: gangOn("j", 1, "n0")},
				lifecycle.ConfirmStrays{JobID: "j", HasAlloc: true}, lifecycle.ConfirmStrays{JobID: "k"}}},
		{name: "strays of an active job without allocation: its requeue sweeps them",
			in:   lifecycle.ReconcileInput{Active: watched(brief("j", domain.StateRunning, 1)), Claims: []domain.Claim{claim("j", 1)}},
			want: []lifecycle.Action{lifecycle.RequeueUnlessHeld{Alloc: unheld("j", 1), Reason: recordGone}}},
		{name: "a whole pass: allocations in listing order, then by job",
			in: lifecycle.ReconcileInput{
				Allocs: allocs(gangOn("z", 1, "n0"), reserving(gangOn("a", 1, "n1"), late), gangOn("m", 3, "n0", "n1")),
				Active: watched(brief("a", domain.StateReserved, 1), brief("m", domain.StateReserved, 3),
					brief("y", domain.StateRunning, 4), brief("x", domain.StateReserved, 1), brief("p", domain.StatePending, 1)),
				Malformed: map[string]error{"q": bad1},
				Claims:    []domain.Claim{claim("m", 2), claim("q", 1), claim("s", 1)},
			},
			want: []lifecycle.Action{
				lifecycle.ConfirmAllocation{Alloc: gangOn("z", 1, "n0")},
				lifecycle.LaunchTimeout{Alloc: reserving(gangOn("a", 1, "n1"), late)},
				lifecycle.AnnounceRunning{Alloc: gangOn("m", 3, "n0", "n1")},
				lifecycle.RequeueUnlessHeld{Alloc: unheld("x", 1), Reason: reservationLost},
				lifecycle.RequeueUnlessHeld{Alloc: unheld("y", 4), Reason: recordGone},
				lifecycle.DropMalformed{JobID: "q", Why: bad1},
				lifecycle.SweepStrays{JobID: "m", UpTo: 2},
				lifecycle.ConfirmStrays{JobID: "s"},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now = now
			if c.in.Up == nil {
				c.in.Up = map[string]bool{"n0": true, "n1": true}
			}
			if got := lifecycle.Reconcile(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Reconcile:\n got %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// JudgeAllocation is also what a confirming read of the record is judged
// by: whatever the read says, an allocation of an attempt that is over is
// released before anything else.
func TestJudgeAllocation(t *testing.T) {
	up := map[string]bool{"n0": true}
	a := gangOn("j", 2, "n0", "n1")
	late := reserving(gangOn("j", 2, "n0"), now.Add(-time.Second))
	fresh := a
	fresh.ReservedAt = now.Add(-2 * time.Second)
	cases := []struct {
		name  string
		a     domain.Allocation
		job   domain.JobBrief
		found bool
		want  lifecycle.Action
	}{
		{name: "no record", a: a, want: lifecycle.Release{JobID: "j", Attempt: 2}},
		{name: "finished", a: a, job: brief("j", domain.StateSucceeded, 2), found: true, want: lifecycle.Release{JobID: "j", Attempt: 2}},
		{name: "on a later attempt", a: a, job: brief("j", domain.StatePending, 3), found: true, want: lifecycle.Release{JobID: "j", Attempt: 2}},
		{name: "finished, past its launch deadline: released, not requeued", a: late, job: brief("j", domain.StateCancelled, 2), found: true,
			want: lifecycle.Release{JobID: "j", Attempt: 2}},
		{name: "the watch lagged: the record confirms the attempt", a: a, job: brief("j", domain.StateRunning, 2), found: true,
			want: lifecycle.Requeue{Alloc: a, Reason: "node n1 lost"}},
		// A read that lags the allocation is stale; releasing is final.
		{name: "a record of an earlier attempt than the allocation", a: a, job: brief("j", domain.StatePending, 1), found: true},
		{name: "no record yet for a fresh allocation", a: fresh},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lifecycle.JudgeAllocation(c.a, c.job, c.found, up, now); !reflect.DeepEqual(got, c.want) {
				t.Errorf("JudgeAllocation = %#v, want %#v", got, c.want)
			}
		})
	}
}

// A node going down requeues every gang with a rank there, and only those
// reserved on the registration that went down.
func TestNodeLost(t *testing.T) {
	on0, on1, both := gangOn("a", 1, "n0"), gangOn("b", 1, "n1"), gangOn("c", 2, "n0", "n1")
	// on1 was reserved on n1's registration 7; both records no epoch.
	on1.NodeEpochs = map[string]int64{"n1": 7}
	got := lifecycle.NodeLost(allocs(on0, on1, both), "n1", 7)
	want := []lifecycle.Requeue{{Alloc: on1, Reason: "node n1 lost"}, {Alloc: both, Reason: "node n1 lost"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NodeLost:\n got %#v\nwant %#v", got, want)
	}
	// n1 came back (registration 8) and on1 was reserved there: the loss
	// of registration 7 does not touch it.
	on1.NodeEpochs["n1"] = 8
	if got := lifecycle.NodeLost(allocs(on1), "n1", 7); got != nil {
		t.Errorf("the loss of an earlier registration requeued %#v", got)
	}
	if got := lifecycle.NodeLost(allocs(on0), "n9", 1); got != nil {
		t.Errorf("NodeLost of a node without gangs = %#v", got)
	}
}

// A deadline decided from a pass's listing is acted on only if it still
// holds for the allocation read again: the barrier passed, the pull
// ended, or a later attempt written since, and the gang stays.
func TestStillDue(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	reserved := domain.Allocation{JobID: "j", Attempt: 2, State: domain.AllocReserved, LaunchDeadline: now.Add(-time.Second),
		Placement: domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1"}, {Node: "n2"}}}}
	running := reserved
	running.State = domain.AllocRunning
	later := reserved
	later.Attempt = 3
	extended := reserved
	extended.LaunchDeadline = now.Add(time.Minute)
	pulling := reserved
	pulling.Pull = &domain.PullPhase{Image: "img", Deadline: now.Add(-time.Second), Nodes: map[string]domain.NodePull{"n1": {}}}
	pulled := pulling
	pulled.Pull = &domain.PullPhase{Image: "img", Deadline: now.Add(-time.Second), Nodes: map[string]domain.NodePull{"n1": {}, "n2": {}}, DoneAt: now.Add(-time.Millisecond)}
	timeout, failPull := lifecycle.LaunchTimeout{Alloc: reserved}, lifecycle.FailPull{Alloc: pulling}
	for _, c := range []struct {
		name  string
		act   lifecycle.Action
		fresh domain.Allocation
		want  bool
	}{
		{"launch deadline still passed", timeout, reserved, true},
		{"barrier passed since", timeout, running, false},
		{"a later attempt since", timeout, later, false},
		{"pull ended since: the deadline moved", timeout, extended, false},
		{"pull deadline still passed", failPull, pulling, true},
		{"pull ended since", failPull, pulled, false},
		{"not a deadline's action", lifecycle.Release{JobID: "j", Attempt: 2}, running, true},
	} {
		if got := lifecycle.StillDue(c.act, c.fresh, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
