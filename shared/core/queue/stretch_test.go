package queue_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// twoSpines: a1, a2 on leaf la under spine sa; b1, b2 on leaf lb under
// spine sb. r1 holds a1 until 15:00, r2 holds b1 for days.
func twoSpines() (*place.Snapshot, []queue.RunningJob) { return leavesUnder("sa", "sb", 100*time.Hour) }

// leavesUnder: a1, a2 on leaf la under spine sa; b1, b2 on leaf lb under
// spine sb; r1 holds a1 until 15:00, r2 holds b1 for r2Limit from 13:00.
func leavesUnder(sa, sb string, r2Limit time.Duration) (*place.Snapshot, []queue.RunningJob) {
	running := []queue.RunningJob{hold("r1", 2*time.Hour, "a1"), hold("r2", r2Limit, "b1")}
	snap := pt.MakeCluster().Add(
		pt.MakeNode("a1").Leaf("la").Spine(sa), pt.MakeNode("a2").Leaf("la").Spine(sa),
		pt.MakeNode("b1").Leaf("lb").Spine(sb), pt.MakeNode("b2").Leaf("lb").Spine(sb),
	).Obj()
	for _, r := range running {
		snap.Take(r.Placement)
	}
	return snap, running
}

func TestStretchFactor(t *testing.T) {
	snap, _ := twoSpines()
	topo, err := snap.ResolvedTopology()
	if err != nil {
		t.Fatal(err)
	}
	on := func(nodes ...string) domain.Placement {
		var p domain.Placement
		for _, n := range nodes {
			p.Nodes = append(p.Nodes, domain.NodePlacement{Node: n})
		}
		return p
	}
	for _, c := range []struct {
		s     queue.Stretch
		nodes []string
		want  float64
	}{
		{queue.Stretch{}, []string{"a1", "a2"}, 1},
		{queue.Stretch{}, []string{"a1", "b2"}, 1.25}, // +1 leaf × 0.05, +1 spine × 0.20
		{queue.Stretch{Leaf: 0.1, Spine: -1}, []string{"a1", "b1", "b2"}, 1.1},
		{queue.Stretch{Leaf: -1, Spine: -1}, []string{"a1", "b2"}, 1},
	} {
		if got := c.s.Factor(topo, on(c.nodes...)); got != c.want {
			t.Errorf("%+v on %v: factor %v, want %v", c.s, c.nodes, got, c.want)
		}
	}
}

// TestWaitsForCompactPlacement: a 2-node gang asked for one leaf and its
// 15-minute wait has run out; a2 and b2 are free now, across two spines
// (×1.25 by default), and leaf la will be whole when r1 ends at 15:00.
// With a 24 h limit, spread from now ends ≈ 20:00 tomorrow, compact from
// 15:00 ≈ 15:00 tomorrow: it waits, holding the reservation on la. With a
// 2 h limit, spread ends 16:30 and compact 17:00: weighing its own
// slowdown alone (weight 1) it starts now, spread; with the default
// weight (100: spread counts ×26) it waits for la too. Without the
// stretch model it starts now whatever its limit.
func TestWaitsForCompactPlacement(t *testing.T) {
	snap, running := twoSpines()
	gang := func(limit time.Duration) queue.PendingJob {
		return queue.PendingJob{ID: "g", Queue: "q", SubmittedAt: now.Add(-2 * time.Hour), TimeLimit: limit,
			Request: pt.MakeGang(2, 8).ID("g").MaxSwitches(1, 15*time.Minute).WaitSince(now.Add(-time.Hour)).Obj()}
	}
	plan := func(limit time.Duration, s queue.Stretch) queue.Plan {
		return queue.PlanBackfill(queue.Input{Snapshot: snap.Clone(), Running: running, Now: now,
			Pending: []queue.PendingJob{gang(limit)}, Config: queue.Config{Stretch: s}})
	}

	p := plan(24*time.Hour, queue.Stretch{})
	d, _ := p.Find("g")
	t.Logf("24h: %s %q | %s", d.Action, d.Reason, d.Detail)
	if d.Action != queue.Pending || d.ReasonCode != place.ReasonWaitingForSwitches {
		t.Fatalf("24 h gang: %s %q, want pending WaitingForSwitches", d.Action, d.Reason)
	}
	// The user is told the expected end (×1.25), not the weighed one.
	if !strings.Contains(d.Detail, "it would end ≈ Jun 2 20:00, weighed as") {
		t.Errorf("24 h gang: detail %q, want the expected spread end, 20:00 tomorrow", d.Detail)
	}
	r := p.Reservation
	if r == nil || !r.Start.Equal(now.Add(time.Hour)) {
		t.Fatalf("reservation %+v, want g from 15:00", r)
	}
	var nodes []string
	for _, n := range r.Placement.Nodes {
		nodes = append(nodes, n.Node)
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"a1", "a2"}) {
		t.Errorf("reserved nodes %v, want leaf la (a1, a2)", nodes)
	}

	for _, c := range []struct {
		limit time.Duration
		s     queue.Stretch
	}{{2 * time.Hour, queue.Stretch{Weight: 1}}, {24 * time.Hour, queue.Stretch{Leaf: -1, Spine: -1}}} {
		d, _ := plan(c.limit, c.s).Find("g")
		if d.Action != queue.Start || !d.Relaxed {
			t.Errorf("%s gang, stretch %+v: %s %q, want a relaxed start now", c.limit, c.s, d.Action, d.Reason)
		}
	}
	if d, _ := plan(2*time.Hour, queue.Stretch{}).Find("g"); d.Action != queue.Pending || d.ReasonCode != place.ReasonWaitingForSwitches {
		t.Errorf("2h gang, default weight: %s %q, want pending WaitingForSwitches", d.Action, d.Reason)
	}
}

// TestBackfillWaitsForCompactPlacement: as above, but behind a 5-node job
// that holds the reservation (from when r2 ends, in 99 h). The gang could
// backfill now, spread over a2 and b2, since it ends before that; it waits
// for leaf la instead, and holds it from 15:00 (holds.go), so later jobs
// cannot take it. With a 2 h limit, weighing its own slowdown alone
// (weight 1), it backfills spread; with the default weight it waits.
func TestBackfillWaitsForCompactPlacement(t *testing.T) {
	snap, running := twoSpines()
	snap = pt.MakeCluster().AddViews(snap.Nodes...).Add(pt.MakeNode("c1").Leaf("lc").Spine("sb")).Obj()
	gang := func(limit time.Duration) queue.PendingJob {
		return queue.PendingJob{ID: "g", Queue: "q", SubmittedAt: now.Add(-2 * time.Hour), TimeLimit: limit,
			Request: pt.MakeGang(2, 8).ID("g").MaxSwitches(1, 15*time.Minute).WaitSince(now.Add(-time.Hour)).Obj()}
	}
	for _, c := range []struct {
		limit time.Duration
		s     queue.Stretch
		want  queue.Action
	}{{24 * time.Hour, queue.Stretch{}, queue.Pending}, {2 * time.Hour, queue.Stretch{}, queue.Pending}, {2 * time.Hour, queue.Stretch{Weight: 1}, queue.Start}} {
		p := queue.PlanBackfill(queue.Input{Snapshot: snap.Clone(), Running: running, Now: now, Config: queue.Config{Stretch: c.s},
			Pending: []queue.PendingJob{job("big", 5, time.Hour, -3*time.Hour), gang(c.limit)}})
		if r := p.Reservation; r == nil || r.JobID != "big" {
			t.Fatalf("%s: reservation %+v, want big's", c.limit, r)
		}
		d, _ := p.Find("g")
		t.Logf("%s: %s %q | %s", c.limit, d.Action, d.Reason, d.Detail)
		if d.Action != c.want {
			t.Errorf("%s gang: %s %q, want %s", c.limit, d.Action, d.Reason, c.want)
		}
		if c.want == queue.Pending && d.ReasonCode != place.ReasonWaitingForSwitches {
			t.Errorf("%s gang waits with %q, want WaitingForSwitches", c.limit, d.Reason)
		}
		if c.want == queue.Pending && (len(p.Holds) != 1 || p.Holds[0].JobID != "g" || !p.Holds[0].Start.Equal(now.Add(time.Hour))) {
			t.Errorf("%s gang: holds %+v, want g's from 15:00", c.limit, p.Holds)
		}
		if c.want == queue.Start && !d.Backfilled {
			t.Errorf("%s gang started without backfill: %+v", c.limit, d)
		}
	}
}
