package placement

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// The leader's clocks follow queue.NextWaitSince across cycles: a gang
// submitted long ago that first becomes runnable (across leaves only) at t0
// waits its whole switch wait from t0, then starts relaxed; the clock is
// dropped when it starts, and with the job when it stops being pending.
func TestSwitchWaitsAcrossCycles(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 14, 0, 0, 0, time.UTC)
	busy := domain.Placement{Nodes: []domain.NodePlacement{
		{Node: "a1", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{Node: "b1", NodeRank: 1, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}},
	}}
	snap := func() *place.Snapshot {
		b := pt.MakeCluster()
		for _, n := range []string{"a1", "a2", "b1", "b2"} {
			b.Add(pt.MakeNode(n).Leaf("leaf-" + n[:1]).Spine("spine"))
		}
		s := b.Obj()
		s.Take(busy)
		return s
	}
	seen := jobsSeen{
		"g":     {job: domain.Job{ID: "g", State: domain.StatePending, Attempt: 1}},
		"other": {job: domain.Job{ID: "other", State: domain.StatePending, Attempt: 3}},
	}
	var w switchWaits
	cycle := func(at time.Time) queue.Decision {
		pending := []queue.PendingJob{{
			ID: "g", Queue: "q", SubmittedAt: t0.Add(-30 * 24 * time.Hour),
			Request: pt.MakeGang(2, 8).ID("g").MaxSwitches(1, 15*time.Minute).Obj(),
		}}
		w.apply(pending, seen)
		in := queue.Input{Snapshot: snap(), Pending: pending, Now: at}
		plan := queue.PlanBackfill(in)
		w.update(plan, in, seen, at)
		d, _ := plan.Find("g")
		return d
	}

	if d := cycle(t0); d.ReasonCode != place.ReasonWaitingForSwitches {
		t.Fatalf("t0: %s %q, want WaitingForSwitches", d.Action, d.Reason)
	}
	if d := cycle(t0.Add(14 * time.Minute)); d.ReasonCode != place.ReasonWaitingForSwitches {
		t.Fatalf("t0+14m: %s %q, want still WaitingForSwitches", d.Action, d.Reason)
	}
	if w.size() != 1 {
		t.Fatalf("%d clocks, want 1", w.size())
	}
	d := cycle(t0.Add(15 * time.Minute))
	if d.Action != queue.Start || !d.Relaxed {
		t.Fatalf("t0+15m: %s relaxed=%v, want a relaxed start", d.Action, d.Relaxed)
	}
	// The start is a proposal gang may refuse: the clock stands while the
	// job is still pending, and the next cycle starts it relaxed at once
	// rather than waiting its 15 minutes again.
	if w.size() != 1 {
		t.Fatalf("%d clocks after the proposal, want 1", w.size())
	}
	if d := cycle(t0.Add(16 * time.Minute)); d.Action != queue.Start || !d.Relaxed {
		t.Fatalf("after a refused proposal: %s %q, want a relaxed start again", d.Action, d.Reason)
	}

	// A clock goes with its job: when the job leaves the pending state,
	// moves to another attempt, or disappears.
	for name, change := range map[string]func(){
		"running":  func() { seen["g"] = &seenJob{job: domain.Job{ID: "g", State: domain.StateRunning, Attempt: 1}} },
		"requeued": func() { seen["g"] = &seenJob{job: domain.Job{ID: "g", State: domain.StatePending, Attempt: 2}} },
		"deleted":  func() { delete(seen, "g") },
	} {
		seen["g"] = &seenJob{job: domain.Job{ID: "g", State: domain.StatePending, Attempt: 1}}
		w = switchWaits{}
		cycle(t0)
		if w.size() != 1 {
			t.Fatalf("%s: %d clocks before, want 1", name, w.size())
		}
		change()
		w.update(queue.Plan{}, queue.Input{}, seen, t0.Add(time.Minute))
		if w.size() != 0 {
			t.Errorf("%s: %d clocks left, want 0", name, w.size())
		}
	}
}

// A gang whose switch wait ran out but that still cannot start (the
// cluster filled up meanwhile) counts as past its wait; before the wait
// ends, or without a clock, it counts 0 in its queue.
func TestPastSwitchWait(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 14, 0, 0, 0, time.UTC)
	nodes := []string{"a1", "a2", "b1", "b2"}
	snap := func(busy ...string) *place.Snapshot {
		b := pt.MakeCluster()
		for _, n := range nodes {
			b.Add(pt.MakeNode(n).Leaf("leaf-" + n[:1]).Spine("spine"))
		}
		s := b.Obj()
		for i, n := range busy {
			s.Take(domain.Placement{Nodes: []domain.NodePlacement{{Node: n, NodeRank: i, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}})
		}
		return s
	}
	spec := jobspec.Spec{Queue: "q", Gang: jobspec.Gang{Nodes: 2, GPUsPerNode: 8},
		Topology: jobspec.Topology{MaxSwitches: 1, WaitForSwitches: jobspec.DurationOf(15 * time.Minute)}}
	g := domain.Job{ID: "g", State: domain.StatePending, Attempt: 1, Spec: spec}
	idle := domain.Job{ID: "idle", State: domain.StatePending, Attempt: 1, Spec: jobspec.Spec{Queue: "other"}}
	seen := jobsSeen{"g": {job: g}, "idle": {job: idle}}
	var w switchWaits
	cycle := func(at time.Time, s *place.Snapshot) queue.Decision {
		pending := []queue.PendingJob{{ID: "g", Queue: "q", Request: place.RequestForJob(g)}}
		w.apply(pending, seen)
		in := queue.Input{Snapshot: s, Pending: pending, Now: at}
		plan := queue.PlanBackfill(in)
		w.update(plan, in, seen, at)
		d, _ := plan.Find("g")
		return d
	}
	// One node busy per leaf: the gang fits only across leaves, and waits.
	if d := cycle(t0, snap("a1", "b1")); d.ReasonCode != place.ReasonWaitingForSwitches {
		t.Fatalf("t0: %s %q, want WaitingForSwitches", d.Action, d.Reason)
	}
	jobs := []domain.Job{g, idle}
	if got := w.pastWait(jobs, t0.Add(14*time.Minute)); got["q"] != 0 || got["other"] != 0 || len(got) != 2 {
		t.Errorf("t0+14m: %v, want q and other at 0", got)
	}
	// Every node busy: when the wait ends the gang cannot start even relaxed.
	at := t0.Add(20 * time.Minute)
	if d := cycle(at, snap(nodes...)); d.Action == queue.Start {
		t.Fatalf("t0+20m: started on a full cluster")
	}
	if got := w.pastWait(jobs, at); got["q"] != 1 || got["other"] != 0 {
		t.Errorf("t0+20m: %v, want q at 1 and other at 0", got)
	}
}
