package accounting

import (
	"math"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// placed is a placement of nodes nodes with gpus GPUs each.
func placed(nodes, gpus int) *domain.Placement {
	p := &domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29500}
	for n := range nodes {
		np := domain.NodePlacement{Node: "node-" + string(rune('a'+n)), NodeRank: n}
		for g := range gpus {
			np.GPUs = append(np.GPUs, g)
		}
		p.Nodes = append(p.Nodes, np)
	}
	return p
}

func ev(t events.Type, s int, mod ...func(*events.Event)) events.Event {
	e := events.Event{Type: t, JobID: "j", Time: at(s), Attempt: 1, Queue: "q", Owner: "ann"}
	for _, m := range mod {
		m(&e)
	}
	return e
}

func code(c int) *int { return &c }

func TestFold(t *testing.T) {
	hour := time.Hour
	timing := func(d domain.Timing) func(*events.Event) { return func(e *events.Event) { e.Timing = &d } }
	withPlacement := func(e *events.Event) { e.Placement = placed(2, 8) }
	exit := func(c int) func(*events.Event) { return func(e *events.Event) { e.ExitCode = code(c) } }
	for _, tc := range []struct {
		name string
		evs  []events.Event
		now  int
		want Row
	}{{
		name: "a whole life, events out of order",
		evs: []events.Event{
			ev(events.Succeeded, 3610, exit(0), timing(domain.Timing{Compute: hour, SchedLatency: 10 * time.Second, GangWait: 5 * time.Second})),
			ev(events.Running, 10, withPlacement), ev(events.Admitted, 0), ev(events.Reserved, 5, withPlacement),
		},
		want: Row{State: domain.StateSucceeded, SubmittedAt: at(0), StartedAt: at(10), EndedAt: at(3610), Elapsed: hour,
			Nodes: 2, GPUs: 16, GPUHours: 16, ExitCode: code(0), Attempt: 1,
			Timing: domain.Timing{Compute: hour, SchedLatency: 10 * time.Second, GangWait: 5 * time.Second}},
	}, {
		name: "only the final event in the window: the accounting fields carry the rest",
		evs: []events.Event{ev(events.Failed, 1800, exit(3), timing(domain.Timing{Compute: 30 * time.Minute}), func(e *events.Event) {
			e.Reason, e.SubmittedAt, e.StartedAt, e.Nodes, e.GPUsPerNode = "rank 0 exited 3", at(-100), at(0), 1, 4
		})},
		want: Row{State: domain.StateFailed, Reason: "rank 0 exited 3", SubmittedAt: at(-100), StartedAt: at(0), EndedAt: at(1800),
			Elapsed: 30 * time.Minute, Nodes: 1, GPUs: 4, GPUHours: 2, ExitCode: code(3), Attempt: 1,
			Timing: domain.Timing{Compute: 30 * time.Minute}},
	}, {
		name: "a running event after the end (re-delivered) does not revive the job",
		evs:  []events.Event{ev(events.Admitted, 0), ev(events.Cancelled, 20, func(e *events.Event) { e.Reason = "by user" }), ev(events.Running, 30, withPlacement)},
		now:  100,
		want: Row{State: domain.StateCancelled, Reason: "by user", SubmittedAt: at(0), EndedAt: at(20), Attempt: 1},
	}, {
		name: "requeued, then running again: the last start counts, restarts from the events",
		evs: []events.Event{
			ev(events.Admitted, 0), ev(events.Running, 10, withPlacement),
			ev(events.Requeued, 100, func(e *events.Event) { e.Reason = "node-down" }),
			ev(events.Running, 200, withPlacement, func(e *events.Event) { e.Attempt, e.Restarts = 2, 1 }),
		},
		now: 200 + 3600,
		want: Row{State: domain.StateRunning, Reason: "node-down", SubmittedAt: at(0), StartedAt: at(200), Elapsed: hour,
			Nodes: 2, GPUs: 16, GPUHours: 16, Attempt: 2, Restarts: 1},
	}, {
		name: "cancelled while pending: the requested shape, no GPU-hours",
		evs: []events.Event{ev(events.Admitted, 0, func(e *events.Event) { e.Nodes, e.GPUsPerNode = 4, 8 }),
			ev(events.Cancelled, 50, func(e *events.Event) { e.Reason = "no longer needed" })},
		want: Row{State: domain.StateCancelled, Reason: "no longer needed", SubmittedAt: at(0), EndedAt: at(50), Nodes: 4, GPUs: 32, Attempt: 1},
	}, {
		name: "rejected: submitted when rejected",
		evs:  []events.Event{ev(events.Rejected, 7, func(e *events.Event) { e.Reason, e.Attempt = "can never fit", 0 })},
		want: Row{State: domain.StateRejected, Reason: "can never fit", SubmittedAt: at(7), EndedAt: at(7)},
	}, {
		name: "chatter is not the lifecycle",
		evs: []events.Event{ev(events.Admitted, 0), ev(events.Draining, 5), ev(events.Conflict, 6), ev(events.Refused, 7),
			ev(events.NodeDown, 8, func(e *events.Event) { e.JobID, e.Node = "", "n1" })},
		want: Row{State: domain.StatePending, SubmittedAt: at(0), Attempt: 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Fold(tc.evs, at(tc.now))
			if len(rows) != 1 {
				t.Fatalf("got %d rows, want 1: %+v", len(rows), rows)
			}
			want := tc.want
			want.JobID, want.Owner, want.Queue = "j", "ann", "q"
			want.Efficiency = want.Timing.Efficiency()
			got := rows[0]
			if math.Abs(got.GPUHours-want.GPUHours) < 1e-9 {
				got.GPUHours = want.GPUHours
			}
			if !same(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// same compares rows, exit codes by value.
func same(a, b Row) bool {
	if (a.ExitCode == nil) != (b.ExitCode == nil) || a.ExitCode != nil && *a.ExitCode != *b.ExitCode {
		return false
	}
	a.ExitCode, b.ExitCode = nil, nil
	return a == b
}

func TestFoldOrdersJobsBySubmitTime(t *testing.T) {
	late := ev(events.Admitted, 50)
	late.JobID = "a-late"
	early := ev(events.Admitted, 10)
	early.JobID = "z-early"
	rows := Fold([]events.Event{late, early}, at(60))
	if len(rows) != 2 || rows[0].JobID != "z-early" || rows[1].JobID != "a-late" {
		t.Errorf("rows = %+v", rows)
	}
}

func TestUsage(t *testing.T) {
	rows := []Row{
		{Owner: "bob", Queue: "q", GPUHours: 1, Timing: domain.Timing{Compute: time.Hour, SchedLatency: time.Hour, GangWait: 2 * time.Second}},
		{Owner: "ann", Queue: "q", GPUHours: 2, Timing: domain.Timing{Compute: time.Hour, GangWait: 4 * time.Second}},
		{Owner: "ann", Queue: "q", GPUHours: 3, Timing: domain.Timing{Compute: 3 * time.Hour, Drain: time.Hour, GangWait: 2 * time.Second}},
		{Owner: "ann", Queue: "q", State: domain.StateRejected},
		{Owner: "ann", Queue: "big", GPUHours: 0.5},
	}
	got := Usage(rows)
	want := []UsageRow{
		{Owner: "ann", Queue: "big", Jobs: 1, GPUHours: 0.5},
		{Owner: "ann", Queue: "q", Jobs: 3, GPUHours: 5, MeanGangWait: 3 * time.Second, Efficiency: 0.8},
		{Owner: "bob", Queue: "q", Jobs: 1, GPUHours: 1, MeanGangWait: 2 * time.Second, Efficiency: 0.5},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
