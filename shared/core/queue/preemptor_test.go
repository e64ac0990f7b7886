package queue_test

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// TestPreemptor: a job the limits would hold never preempts, including
// one that passed in plan order only because its owner's later job started
// in the same plan; the next eligible job does instead.
func TestPreemptor(t *testing.T) {
	running := []queue.RunningJob{
		ownedHold(hold("low1", time.Hour, "n1"), "dave", "q"),
		ownedHold(hold("low2", time.Hour, "n2"), "dave", "q"),
	}
	cfg := queue.Config{Users: map[string]queue.UserConfig{"bob": {MaxRunningGPUs: 16}, "alice": {MaxRunningGPUs: 8}}}
	prio := func(j queue.PendingJob, p int) queue.PendingJob { j.Priority = p; return j }
	in := queue.Input{
		Snapshot: cluster(3, running...), Running: running, Now: now, Config: cfg,
		Pending: []queue.PendingJob{
			// bob-big does not fit (Resources, within 16 when considered);
			// bob-small starts after it: bob then holds 8, and bob-big
			// would make 24 > 16, so evicting for it would be in vain.
			prio(owned(job("bob-big", 2, time.Hour, -10*time.Minute), "bob", "q"), 9),
			prio(owned(job("bob-small", 1, time.Hour, -9*time.Minute), "bob", "q"), 9),
			// alice-held is over her limit with nothing running: never.
			prio(owned(job("alice-held", 2, time.Hour, -8*time.Minute), "alice", "q"), 8),
			prio(owned(job("carol", 2, time.Hour, -7*time.Minute), "carol", "q"), 5),
		},
	}
	plan := queue.PlanBackfill(in)
	for _, d := range plan.Decisions {
		t.Logf("%s %s %q", d.JobID, d.Action, d.Reason)
	}
	if d, _ := plan.Find("bob-big"); d.ReasonCode != queue.ReasonReserved && d.ReasonCode != queue.ReasonResources {
		t.Fatalf("bob-big: %q, want it waiting for resources", d.Reason)
	}
	if d, _ := plan.Find("bob-small"); d.Action != queue.Start {
		t.Fatalf("bob-small: %s %q, want Start", d.Action, d.Reason)
	}
	j, ok := queue.Preemptor(in, plan)
	if !ok || j.ID != "carol" {
		t.Fatalf("preemptor %q %v, want carol", j.ID, ok)
	}
	// Without limits the highest priority waiting for resources preempts,
	// as the placement service chose before.
	in.Config = queue.Config{}
	plan = queue.PlanBackfill(in)
	if j, ok := queue.Preemptor(in, plan); !ok || j.ID != "bob-big" {
		t.Fatalf("without limits: preemptor %q %v, want bob-big", j.ID, ok)
	}
	// Queue quotas the same way: q's quota of 24 is full once bob-small
	// starts (8 + 8 + 8), so nobody in q may preempt.
	in.Config = queue.Config{Queues: map[string]queue.QueueConfig{"q": {GPUQuota: 24}}}
	plan = queue.PlanBackfill(in)
	if j, ok := queue.Preemptor(in, plan); ok {
		t.Fatalf("with q full: preemptor %q, want none", j.ID)
	}
}
