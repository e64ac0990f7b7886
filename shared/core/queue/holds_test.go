package queue_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// oneSpine: a1, a2 on leaf la and b1, b2 on leaf lb, one spine. r1 holds
// a1 until 15:00, r2 holds b1 until midnight; a2 and b2 are free.
func oneSpine() (*place.Snapshot, []queue.RunningJob) { return leavesUnder("s", "s", 11*time.Hour) }

func nodesOf(r queue.Reservation) []string {
	var out []string
	for _, n := range r.Placement.Nodes {
		out = append(out, n.Node)
	}
	slices.Sort(out)
	return out
}

// TestSwitchWaitingGangHolds: "big" (all 4 nodes) holds the reservation
// from midnight. Behind it g, a 2-node gang with maxSwitches 1, could start
// now only across la and lb and waits for its switch; leaf la is whole at
// 15:00, so g holds a1, a2 from then (topology-aware EASY backfill). A
// later job may use la only if it ends by 15:00; otherwise it backfills
// only on b2, or waits. Before holds, s took a2 or b2 by seed and s2 the
// other, and g found la whole only when s ended at 19:00.
func TestSwitchWaitingGangHolds(t *testing.T) {
	g := job("g", 2, 2*time.Hour, -3*time.Hour)
	g.Request.Topology = place.Constraints{MaxSwitches: 1, WaitForSwitches: time.Hour}
	g.Request.WaitSince = now
	shortWait := g
	shortWait.Request.Topology.WaitForSwitches = 30 * time.Minute
	for _, c := range []struct {
		name  string
		gang  queue.PendingJob
		after []queue.PendingJob
		want  map[string]string // job -> Start node, or pending reason code
		holds bool
		s     queue.Stretch
	}{
		{
			name: "a job outlasting the hold backfills off its leaf", gang: g,
			after: []queue.PendingJob{job("s", 1, 5*time.Hour, -2*time.Hour)},
			want:  map[string]string{"s": "b2"}, holds: true,
		},
		{
			name: "a second one waits rather than delay the hold", gang: g,
			after: []queue.PendingJob{job("s", 1, 5*time.Hour, -2*time.Hour), job("s2", 1, 5*time.Hour, -time.Hour)},
			want:  map[string]string{"s": "b2", "s2": queue.ReasonPriority}, holds: true,
		},
		{
			name: "a job ending before the hold starts may use its leaf", gang: g,
			after: []queue.PendingJob{job("s", 1, 5*time.Hour, -2*time.Hour), job("short", 1, 30*time.Minute, -time.Hour)},
			want:  map[string]string{"s": "b2", "short": "a2"}, holds: true,
		},
		{
			// Its wait ends at 14:30, before la is whole: weighing its
			// own slowdown alone, it will start spread then (×1.05 ends
			// 16:36, sooner than 17:00 on la), so there is no leaf to hold
			// for it.
			name: "a gang that will start spread holds nothing", gang: shortWait, s: queue.Stretch{Weight: 1},
			after: []queue.PendingJob{job("s", 1, 5*time.Hour, -2*time.Hour)},
			want:  map[string]string{"g": place.ReasonWaitingForSwitches},
		},
		{
			name: "a gang short of resources holds nothing", gang: job("g", 3, 2*time.Hour, -3*time.Hour),
			after: []queue.PendingJob{job("s", 1, 5*time.Hour, -2*time.Hour), job("s2", 1, 5*time.Hour, -time.Hour)},
			want:  map[string]string{"g": place.ReasonResources},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap, running := oneSpine()
			pending := append([]queue.PendingJob{job("big", 4, time.Hour, -4*time.Hour), c.gang}, c.after...)
			p := queue.PlanBackfill(queue.Input{Snapshot: snap, Running: running, Now: now, Pending: pending, Config: queue.Config{Stretch: c.s}})
			if r := p.Reservation; r == nil || r.JobID != "big" || !r.Start.Equal(now.Add(10*time.Hour)) {
				t.Fatalf("reservation %+v, want big's from midnight", r)
			}
			if c.holds {
				if len(p.Holds) != 1 || p.Holds[0].JobID != "g" || !p.Holds[0].Start.Equal(now.Add(time.Hour)) ||
					!slices.Equal(nodesOf(p.Holds[0]), []string{"a1", "a2"}) {
					t.Fatalf("holds %+v, want g on a1, a2 from 15:00", p.Holds)
				}
				d, _ := p.Find("g")
				if d.Action != queue.Pending || d.ReasonCode != place.ReasonWaitingForSwitches {
					t.Errorf("g: %s %q, want pending WaitingForSwitches", d.Action, d.Reason)
				}
			} else if len(p.Holds) != 0 {
				t.Errorf("holds %+v, want none", p.Holds)
			}
			for id, want := range c.want {
				d, _ := p.Find(id)
				t.Logf("%s: %s %q | %s", id, d.Action, d.Reason, d.Detail)
				got := d.ReasonCode
				if d.Action == queue.Start {
					got = d.Placement.Nodes[0].Node
				}
				if got != want {
					t.Errorf("%s: got %s (%s %q), want %s", id, got, d.Action, d.Reason, want)
				}
			}
		})
	}
}

// TestUnconstrainedGangPrefersFewestLeaves: a 2-node gang that set no
// topology limit could start now on a2 and b2 (two leaves, ×1.05), or on
// la when r1 ends at 15:00. With a 24 h limit spread ends ≈ 15:12
// tomorrow and compact ≈ 15:00: it waits, holding la. With 2 h, spread
// ends 16:06 and compact 17:00: weighing its own slowdown alone (weight
// 1) it starts now, spread; with the default weight (×6 when weighed) it
// waits; without the stretch model it starts now whatever its limit.
func TestUnconstrainedGangPrefersFewestLeaves(t *testing.T) {
	for _, c := range []struct {
		limit time.Duration
		s     queue.Stretch
		wait  bool
	}{{24 * time.Hour, queue.Stretch{}, true}, {2 * time.Hour, queue.Stretch{}, true}, {2 * time.Hour, queue.Stretch{Weight: 1}, false}, {24 * time.Hour, queue.Stretch{Leaf: -1, Spine: -1}, false}} {
		snap, running := oneSpine()
		p := queue.PlanBackfill(queue.Input{Snapshot: snap, Running: running, Now: now, Config: queue.Config{Stretch: c.s},
			Pending: []queue.PendingJob{job("u", 2, c.limit, -time.Hour)}})
		d, _ := p.Find("u")
		t.Logf("%s %+v: %s %q | %s", c.limit, c.s, d.Action, d.Reason, d.Detail)
		if !c.wait {
			if d.Action != queue.Start || len(d.Placement.Nodes) != 2 {
				t.Errorf("%s %+v: %s %q, want a start now", c.limit, c.s, d.Action, d.Reason)
			}
			continue
		}
		if d.Action != queue.Pending || d.ReasonCode != place.ReasonWaitingForSwitches {
			t.Fatalf("%s: %s %q, want pending WaitingForSwitches", c.limit, d.Action, d.Reason)
		}
		if r := p.Reservation; r == nil || !r.Start.Equal(now.Add(time.Hour)) || !slices.Equal(nodesOf(*r), []string{"a1", "a2"}) {
			t.Errorf("reservation %+v, want u on a1, a2 from 15:00", r)
		}
	}
}
