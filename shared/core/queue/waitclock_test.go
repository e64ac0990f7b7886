package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// twoLeaves is a1, a2 under leaf-a and b1, b2 under leaf-b, with the
// running jobs' GPUs taken.
func twoLeaves(running ...queue.RunningJob) *place.Snapshot {
	b := pt.MakeCluster()
	for _, n := range []string{"a1", "a2", "b1", "b2"} {
		b.Add(pt.MakeNode(n).Leaf("leaf-" + n[:1]).Spine("spine"))
	}
	snap := b.Obj()
	for _, r := range running {
		snap.Take(r.Placement)
	}
	return snap
}

// leafGang is a 2-node gang submitted a month ago asking for one leaf,
// waiting up to 15 minutes for it; its wait has not started.
func leafGang() queue.PendingJob {
	return queue.PendingJob{
		ID: "g", Queue: "q", SubmittedAt: now.Add(-30 * 24 * time.Hour), TimeLimit: time.Hour,
		Request: pt.MakeGang(2, 8).ID("g").MaxSwitches(1, 15*time.Minute).Obj(),
	}
}

// A job that first becomes runnable (across leaves only) long after its
// submission still waits its whole switch wait for one leaf, counted from
// that moment, and then takes the best available: Slurm's
// --switches=N@max-time. Counted from submission (as before), it would
// have been placed across two leaves at once.
func TestSwitchWaitStartsWhenRunnable(t *testing.T) {
	running := []queue.RunningJob{hold("ra", 0, "a1"), hold("rb", 0, "b1")}
	g := leafGang()
	plan := func(at time.Time) queue.Decision {
		in := queue.Input{Snapshot: twoLeaves(running...), Running: running, Pending: []queue.PendingJob{g}, Now: at}
		d, _ := queue.PlanBackfill(in).Find("g")
		g.Request.WaitSince = queue.NextWaitSince(d, g.Request.WaitSince, at)
		return d
	}

	d := plan(now)
	if d.Action != queue.Pending || d.ReasonCode != place.ReasonWaitingForSwitches || !strings.Contains(d.Reason, "15m left") {
		t.Fatalf("first runnable: %s %q, want WaitingForSwitches with 15m left", d.Action, d.Reason)
	}
	if !g.Request.WaitSince.Equal(now) {
		t.Fatalf("wait started %v, want now", g.Request.WaitSince)
	}
	d = plan(now.Add(10 * time.Minute))
	if d.ReasonCode != place.ReasonWaitingForSwitches || !strings.Contains(d.Reason, "5m left") {
		t.Fatalf("10m later: %s %q, want WaitingForSwitches with 5m left", d.Action, d.Reason)
	}
	if !g.Request.WaitSince.Equal(now) {
		t.Fatalf("the clock moved to %v; it must keep its start", g.Request.WaitSince)
	}
	d = plan(now.Add(15 * time.Minute))
	if d.Action != queue.Start || !d.Relaxed || strings.Join(d.Placement.NodeNames(), ",") != "a2,b2" {
		t.Fatalf("after the wait: %s relaxed=%v %v, want a relaxed start on a2,b2", d.Action, d.Relaxed, d.Placement)
	}
	if !g.Request.WaitSince.IsZero() {
		t.Fatalf("a start must reset the clock, got %v", g.Request.WaitSince)
	}
}

// Within its wait the job takes one leaf as soon as one frees up.
func TestSwitchWaitEndsOnOneLeaf(t *testing.T) {
	g := leafGang()
	g.Request.WaitSince = now.Add(-10 * time.Minute)
	running := []queue.RunningJob{hold("rb", 0, "b1")} // ra on a1 ended
	in := queue.Input{Snapshot: twoLeaves(running...), Running: running, Pending: []queue.PendingJob{g}, Now: now}
	d, _ := queue.PlanBackfill(in).Find("g")
	if d.Action != queue.Start || d.Relaxed || strings.Join(d.Placement.NodeNames(), ",") != "a1,a2" {
		t.Fatalf("%s relaxed=%v %v, want a start on a1,a2", d.Action, d.Relaxed, d.Placement)
	}
}

// The reservation of a job whose wait has not started counts the wait from
// when the job would first be runnable across leaves (20m: ra and rb end),
// not from now (the job is not runnable now) nor from its submission.
func TestReservationStartsTheWaitWhenRunnable(t *testing.T) {
	running := []queue.RunningJob{
		hold("ra", 10*time.Minute+time.Hour, "a1"), hold("rb", 20*time.Minute+time.Hour, "b1"),
		hold("ra2", 4*time.Hour, "a2"), hold("rb2", 4*time.Hour, "b2"),
	} // started an hour ago: ra ends at +10m, rb at +20m, the others at +3h
	g := leafGang()
	g.Request.Topology.WaitForSwitches = time.Hour
	// Weighing its own slowdown alone: spread at +80m then ends before
	// the compact placement would (this is about the wait's clock).
	in := queue.Input{Snapshot: twoLeaves(running...), Running: running, Pending: []queue.PendingJob{g}, Now: now,
		Config: queue.Config{Stretch: queue.Stretch{Weight: 1}}}
	plan := queue.PlanBackfill(in)
	d, _ := plan.Find("g")
	res := plan.Reservation
	if d.ReasonCode != queue.ReasonReserved || res == nil || !res.Start.Equal(now.Add(80*time.Minute)) ||
		strings.Join(res.Placement.NodeNames(), ",") != "a1,b1" {
		t.Fatalf("%q, reservation %+v; want g reserved at +80m (+20m runnable, +1h wait) on a1,b1", d.Reason, res)
	}
	if !queue.NextWaitSince(d, time.Time{}, now).IsZero() {
		t.Fatal("a job not runnable now must not start its wait")
	}
	// A wait that started 5m ago ends at +55m: the job is reserved for
	// the later of that and +20m.
	g.Request.WaitSince = now.Add(-5 * time.Minute)
	in.Pending = []queue.PendingJob{g}
	if res := queue.PlanBackfill(in).Reservation; res == nil || !res.Start.Equal(now.Add(55*time.Minute)) {
		t.Fatalf("reservation %+v, want +55m", res)
	}
}

func TestNextWaitSince(t *testing.T) {
	before := now.Add(-time.Minute)
	cases := []struct {
		name  string
		d     queue.Decision
		since time.Time
		want  time.Time
	}{
		{"runnable across switches starts it", queue.Decision{Action: queue.Pending, ReasonCode: place.ReasonWaitingForSwitches}, time.Time{}, now},
		{"preferred level starts it", queue.Decision{Action: queue.Pending, ReasonCode: place.ReasonWaitingForTopology}, time.Time{}, now},
		{"no resources does not", queue.Decision{Action: queue.Pending, ReasonCode: queue.ReasonResources}, time.Time{}, time.Time{}},
		{"reserved does not", queue.Decision{Action: queue.Pending, ReasonCode: queue.ReasonReserved}, time.Time{}, time.Time{}},
		{"a running clock keeps its start", queue.Decision{Action: queue.Pending, ReasonCode: place.ReasonWaitingForSwitches}, before, before},
		{"even when blocked again", queue.Decision{Action: queue.Pending, ReasonCode: queue.ReasonResources}, before, before},
		{"a start resets it", queue.Decision{Action: queue.Start}, before, time.Time{}},
	}
	for _, c := range cases {
		if got := queue.NextWaitSince(c.d, c.since, now); !got.Equal(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
