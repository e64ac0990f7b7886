package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

func owned(j queue.PendingJob, owner, q string) queue.PendingJob {
	j.Owner, j.Queue = owner, q
	return j
}

func ownedHold(r queue.RunningJob, owner, q string) queue.RunningJob {
	r.Owner, r.Queue = owner, q
	return r
}

// TestUserGPULimit: bob (32 GPUs, 16 in research) holds 24; the plan
// starts only what keeps him within both limits, holds the rest with
// UserGPULimit and the numbers, gives them no reservation, and leaves
// other users' jobs alone.
func TestUserGPULimit(t *testing.T) {
	running := []queue.RunningJob{
		ownedHold(hold("r1", time.Hour, "n1"), "bob", "q"),
		ownedHold(hold("r2", time.Hour, "n2"), "bob", "q"),
		ownedHold(hold("r3", time.Hour, "n3"), "bob", "research"),
	}
	cfg := queue.Config{
		DefaultUser: queue.UserConfig{MaxRunningGPUs: 8},
		Users: map[string]queue.UserConfig{"bob": {MaxRunningGPUs: 32,
			Queues: map[string]queue.UserQueueConfig{"research": {MaxRunningGPUs: 16}}}},
	}
	pending := []queue.PendingJob{
		owned(job("big", 2, time.Hour, -9*time.Minute), "bob", "q"),           // 24+16 > 32
		owned(job("res", 1, time.Hour, -8*time.Minute), "bob", "research"),    // 24+8 ≤ 32, research 8+8 ≤ 16
		owned(job("res2", 1, time.Hour, -7*time.Minute), "bob", "research"),   // 32+8 > 32
		owned(job("alice", 1, time.Hour, -6*time.Minute), "alice", "q"),       // default 8: fits
		owned(job("alice2", 1, time.Hour, -5*time.Minute), "alice", "q"),      // 8+8 > 8
		owned(job("legacy", 1, time.Hour, -4*time.Minute), "", "q"),           // "" has the default 8: fits
		owned(job("legacy2", 2, time.Hour, -3*time.Minute), "", "q"),          // 16 > 8: never
		owned(job("bob-huge", 5, 10*time.Minute, -2*time.Minute), "bob", "q"), // 40 > 32: never
	}
	in := queue.Input{Snapshot: cluster(8, running...), Running: running, Pending: pending, Now: now, Config: cfg}
	want := map[string]string{
		"big":      "UserGPULimit (24/32 GPUs)",
		"res":      "",
		"res2":     "UserGPULimit (32/32 GPUs)",
		"alice":    "",
		"alice2":   "UserGPULimit (8/8 GPUs)",
		"legacy":   "",
		"legacy2":  "UserGPULimit (8/8 GPUs)",
		"bob-huge": "UserGPULimit (32/32 GPUs)",
	}
	for name, policy := range map[string]queue.Policy{"backfill": queue.PlanBackfill, "fifo": queue.PlanFIFOSkip} {
		plan := policy(in)
		for _, d := range plan.Decisions {
			if d.Reason != want[d.JobID] {
				t.Errorf("%s: %s: %s %q (%s), want %q", name, d.JobID, d.Action, d.Reason, d.Detail, want[d.JobID])
			}
		}
		if plan.Reservation != nil {
			t.Errorf("%s: a job held by its owner's limit got the reservation: %+v", name, plan.Reservation)
		}
		if d, _ := plan.Find("big"); d.Detail != "user bob holds 24 of their 32 GPUs; this job needs 16 more" {
			t.Errorf("%s: big detail: %s", name, d.Detail)
		}
		if d, _ := plan.Find("bob-huge"); !strings.Contains(d.Detail, "more than bob's limit of 32 running; it can never start") {
			t.Errorf("%s: bob-huge detail: %s", name, d.Detail)
		}
	}

	// The per-queue limit, on its own: bob holds 8 in research, 24 overall.
	in.Pending = []queue.PendingJob{owned(job("res3", 2, time.Hour, -time.Minute), "bob", "research")}
	in.Config.Users["bob"] = queue.UserConfig{MaxRunningGPUs: 64, Queues: map[string]queue.UserQueueConfig{"research": {MaxRunningGPUs: 16}}}
	d, _ := queue.PlanBackfill(in).Find("res3")
	if d.Reason != `UserGPULimit (8/16 GPUs in queue "research")` ||
		d.Detail != `user bob holds 8 of their 16 GPUs in queue "research"; this job needs 16 more` {
		t.Errorf("res3: %q (%s)", d.Reason, d.Detail)
	}
}

// TestUserGPULimitNoBackfill: behind a reservation, a short job that
// could backfill still waits when it would put its owner over the limit,
// and another user's job takes the gap.
func TestUserGPULimitNoBackfill(t *testing.T) {
	running := []queue.RunningJob{ownedHold(hold("r1", 2*time.Hour, "n1"), "bob", "q")} // ends 15:00
	in := queue.Input{
		Snapshot: cluster(3, running...), Running: running, Now: now,
		Config: queue.Config{Users: map[string]queue.UserConfig{"bob": {MaxRunningGPUs: 8}}},
		Pending: []queue.PendingJob{
			owned(job("A", 3, 2*time.Hour, -10*time.Minute), "alice", "q"),
			owned(job("bob-short", 1, 10*time.Minute, -5*time.Minute), "bob", "q"),
			owned(job("carol-short", 1, 10*time.Minute, -4*time.Minute), "carol", "q"),
		},
	}
	plan := queue.PlanBackfill(in)
	if r := plan.Reservation; r == nil || r.JobID != "A" {
		t.Fatalf("reservation %+v, want A", r)
	}
	if d, _ := plan.Find("bob-short"); d.ReasonCode != queue.ReasonUserGPULimit {
		t.Errorf("bob-short: %s %q, want UserGPULimit", d.Action, d.Reason)
	}
	if d, _ := plan.Find("carol-short"); d.Action != queue.Start || !d.Backfilled {
		t.Errorf("carol-short: %s %q, want a backfilled start", d.Action, d.Reason)
	}
}
