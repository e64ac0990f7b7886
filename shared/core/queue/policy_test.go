package queue_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

func TestDecayedUsage(t *testing.T) {
	h := time.Hour
	hourToNow := 1 / math.Ln2 * (1 - 0.5) // ∫ over the last half-life
	cases := []struct {
		name string
		rec  queue.UsageRecord
		half time.Duration
		want float64
	}{
		{"one GPU for the last half-life", queue.UsageRecord{GPUs: 1, Start: now.Add(-h), End: now}, h, hourToNow},
		{"eight GPUs scale linearly", queue.UsageRecord{GPUs: 8, Start: now.Add(-h), End: now}, h, 8 * hourToNow},
		{"a half-life older counts half", queue.UsageRecord{GPUs: 1, Start: now.Add(-2 * h), End: now.Add(-h)}, h, hourToNow / 2},
		{"still running counts up to now", queue.UsageRecord{GPUs: 1, Start: now.Add(-h)}, h, hourToNow},
		{"the future does not count", queue.UsageRecord{GPUs: 1, Start: now.Add(-h), End: now.Add(5 * h)}, h, hourToNow},
		{"no decay is plain GPU-hours", queue.UsageRecord{GPUs: 4, Start: now.Add(-3 * h), End: now.Add(-h)}, 0, 8},
		{"an empty interval counts nothing", queue.UsageRecord{GPUs: 4, Start: now, End: now}, h, 0},
	}
	for _, c := range cases {
		c.rec.Queue = "q"
		got := queue.DecayedUsage([]queue.UsageRecord{c.rec}, now, c.half)["q"]
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %.6f, want %.6f", c.name, got, c.want)
		}
	}
	both := queue.DecayedUsage([]queue.UsageRecord{
		{Queue: "a", GPUs: 1, Start: now.Add(-h), End: now}, {Queue: "a", GPUs: 1, Start: now.Add(-h), End: now},
		{Queue: "b", GPUs: 1, Start: now.Add(-h), End: now},
	}, now, h)
	if math.Abs(both["a"]-2*both["b"]) > 1e-9 {
		t.Errorf("records do not add up: %v", both)
	}
}

func TestOrder(t *testing.T) {
	mk := func(id, q string, prio int, submitted time.Duration) queue.PendingJob {
		j := job(id, 1, time.Hour, submitted)
		j.Queue, j.Priority = q, prio
		return j
	}
	in := queue.Input{
		Config: queue.Config{Queues: map[string]queue.QueueConfig{"heavy": {Weight: 4}}},
		// Equal raw usage: heavy's weight 4 makes its key 25, light's 100.
		Usage: map[string]float64{"heavy": 100, "light": 100, "idle": 0},
		Pending: []queue.PendingJob{
			mk("light-old", "light", 0, -3*time.Hour),
			mk("heavy-new", "heavy", 0, -time.Minute),
			mk("idle", "idle", 0, 0),
			mk("urgent", "light", 5, 0),
			mk("heavy-old", "heavy", 0, -2*time.Hour),
		},
	}
	var got []string
	for _, j := range queue.Order(in) {
		got = append(got, j.ID)
	}
	want := "urgent,idle,heavy-old,heavy-new,light-old"
	if strings.Join(got, ",") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
}

func TestQuota(t *testing.T) {
	running := []queue.RunningJob{hold("r1", time.Hour, "n1")} // queue q holds 8 GPUs
	in := queue.Input{
		Snapshot: cluster(6, running...), Running: running, Now: now,
		Config: queue.Config{Queues: map[string]queue.QueueConfig{"q": {GPUQuota: 24}}},
		Pending: []queue.PendingJob{
			job("fits", 1, time.Hour, -4*time.Minute),    // 8+8 = 16 ≤ 24
			job("over", 2, time.Hour, -3*time.Minute),    // 16+16 = 32 > 24
			job("last", 1, time.Hour, -2*time.Minute),    // 16+8 = 24 ≤ 24
			job("too-big", 4, time.Hour, -1*time.Minute), // 32 > 24: never
		},
	}
	plan := queue.PlanBackfill(in)
	want := map[string]string{"fits": "", "over": "QuotaExceeded (16/24 GPUs)", "last": "", "too-big": "QuotaExceeded (24/24 GPUs)"}
	for _, d := range plan.Decisions {
		if d.Reason != want[d.JobID] {
			t.Errorf("%s: %q (%s), want %q", d.JobID, d.Reason, d.Detail, want[d.JobID])
		}
	}
	if d, _ := plan.Find("too-big"); !strings.Contains(d.Detail, "should have been rejected") {
		t.Errorf("too-big detail: %s", d.Detail)
	}
	if _, never := queue.ExceedsQuota(in.Config, "q", 32); !never {
		t.Error("ExceedsQuota(32 > 24) = false")
	}
	if _, never := queue.ExceedsQuota(in.Config, "q", 24); never {
		t.Error("ExceedsQuota(24 = 24) = true")
	}
	if _, never := queue.ExceedsQuota(in.Config, "other", 1000); never {
		t.Error("a queue without quota rejected a job")
	}
	if plan.Reservation != nil {
		t.Errorf("quota waits got a reservation: %+v", plan.Reservation)
	}
}

func TestBackfillCases(t *testing.T) {
	type want struct{ action, reason string }
	cases := []struct {
		name    string
		nodes   int
		running []queue.RunningJob
		down    []string
		pending []queue.PendingJob
		want    map[string]want
	}{
		{
			name: "shadow: the reservation needs 3 of 4 nodes, one stays usable", nodes: 5,
			running: []queue.RunningJob{hold("r1", 90*time.Minute, "n1"), hold("r2", 2*time.Hour, "n2"), hold("r3", 3*time.Hour, "n3")},
			pending: []queue.PendingJob{job("A", 3, time.Hour, -10*time.Minute), job("long", 1, 5*time.Hour, -5*time.Minute),
				job("long2", 1, 5*time.Hour, -4*time.Minute)},
			// A takes n4, n5 (free now) and n1 (free at 14:30): the shadow
			// is empty, so neither long job may start.
			want: map[string]want{"A": {"Pending", "Reserved (starts ≈ 14:30)"}, "long": {"Pending", "Priority"}, "long2": {"Pending", "Priority"}},
		},
		{
			name: "unknown start when only jobs without limits hold the nodes", nodes: 2,
			running: []queue.RunningJob{hold("forever", 0, "n1")},
			pending: []queue.PendingJob{job("A", 2, time.Hour, -10*time.Minute), job("short", 1, 10*time.Minute, -5*time.Minute)},
			want:    map[string]want{"A": {"Pending", "Reserved (start unknown)"}, "short": {"Pending", "Priority"}},
		},
		{
			name: "no reservation on down nodes: the next blocked job gets it", nodes: 3,
			running: []queue.RunningJob{hold("r1", 2*time.Hour, "n1")},
			down:    []string{"n3"},
			pending: []queue.PendingJob{job("needs3", 3, time.Hour, -10*time.Minute), job("needs2", 2, time.Hour, -5*time.Minute),
				job("small", 1, 2*time.Hour, -1*time.Minute)},
			want: map[string]want{"needs3": {"Pending", "Resources"}, "needs2": {"Pending", "Reserved (starts ≈ 15:00)"},
				"small": {"Pending", "Priority"}},
		},
		{
			name: "behind the reservation, a job that fits nowhere says Resources", nodes: 2,
			running: []queue.RunningJob{hold("r1", 2*time.Hour, "n1")},
			pending: []queue.PendingJob{job("A", 2, time.Hour, -10*time.Minute), job("B", 2, time.Minute, -5*time.Minute)},
			want:    map[string]want{"A": {"Pending", "Reserved (starts ≈ 15:00)"}, "B": {"Pending", "Resources"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := cluster(c.nodes, c.running...)
			for i := range snap.Nodes {
				for _, d := range c.down {
					if snap.Nodes[i].Node.Name == d {
						snap.Nodes[i].Up = false
					}
				}
			}
			plan := queue.PlanBackfill(queue.Input{Snapshot: snap, Running: c.running, Pending: c.pending, Now: now})
			for _, d := range plan.Decisions {
				t.Logf("%s %s %q | %s", d.JobID, d.Action, d.Reason, d.Detail)
				w := c.want[d.JobID]
				if string(d.Action) != w.action || !strings.HasPrefix(d.Reason, w.reason) {
					t.Errorf("%s: %s %q, want %s %q", d.JobID, d.Action, d.Reason, w.action, w.reason)
				}
			}
		})
	}
}

// TestShadowBackfill: a long job may start on what the reservation does
// not use. A (3 nodes, required leaf) reserves leaf-1 at 14:30 (n1, n2
// free then, n4 now); n5 on leaf-2 is outside it, so the first 5-hour job
// starts there and the second waits with Priority.
func TestShadowBackfill(t *testing.T) {
	running := []queue.RunningJob{
		hold("r1", 90*time.Minute, "n1"), hold("r2", 90*time.Minute, "n2"), hold("r3", 2*time.Hour, "n3"),
	}
	b := pt.MakeCluster()
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		b.Add(pt.MakeNode(n).Leaf("leaf-1"))
	}
	snap := b.Add(pt.MakeNode("n5").Leaf("leaf-2")).Obj()
	for _, r := range running {
		snap.Take(r.Placement)
	}
	a := job("A", 3, time.Hour, -10*time.Minute)
	a.Request.Topology.Required = place.LevelLeaf
	plan := queue.PlanBackfill(queue.Input{
		Snapshot: snap, Running: running, Now: now,
		Pending: []queue.PendingJob{a, job("long", 1, 5*time.Hour, -5*time.Minute), job("long2", 1, 5*time.Hour, -4*time.Minute)},
	})
	for _, d := range plan.Decisions {
		t.Logf("%s %s %q | %s", d.JobID, d.Action, d.Reason, d.Detail)
	}
	if r := plan.Reservation; r == nil || strings.Join(r.Placement.NodeNames(), ",") != "n1,n2,n4" {
		t.Fatalf("reservation %+v, want A on n1,n2,n4", r)
	}
	long, _ := plan.Find("long")
	if long.Action != queue.Start || !long.Backfilled || long.Placement.Nodes[0].Node != "n5" {
		t.Fatalf("long: %s on %v, want a backfilled start on n5", long.Action, long.Placement)
	}
	if d, _ := plan.Find("long2"); d.ReasonCode != queue.ReasonPriority {
		t.Fatalf("long2: %q, want Priority", d.Reason)
	}
}
