package queue_test

import (
	"strings"
	"testing"
	"time"

	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// A plan remembers a failure for the rest of the plan by request shape: a
// gang asking for a GPU model the cluster lacks, ahead in the queue, must
// not make a plain gang of the same size fail with it.
func TestMemoIsPerShape(t *testing.T) {
	snap := pt.MakeCluster().Add(
		pt.MakeNode("a1").GPUModel("NVIDIA A100-SXM4-80GB", 81920),
		pt.MakeNode("a2").GPUModel("NVIDIA A100-SXM4-80GB", 81920),
	).Obj()
	typed := queue.PendingJob{ID: "typed", Queue: "q", SubmittedAt: now.Add(-2 * time.Minute), TimeLimit: time.Hour,
		Request: pt.MakeGang(1, 8).ID("typed").GPUType("H100", 0).Obj()}
	plain := job("plain", 1, time.Hour, -time.Minute)
	plan := queue.PlanBackfill(queue.Input{Snapshot: snap, Pending: []queue.PendingJob{typed, plain}, Now: now})
	for _, d := range plan.Decisions {
		t.Logf("%s %s %q | %s", d.JobID, d.Action, d.Reason, d.Detail)
		if d.JobID == "plain" && d.Action != queue.Start {
			t.Errorf("plain 1×8 gang on two idle nodes: %s %q / %s, want started", d.Action, d.Reason, d.Detail)
		}
	}
}

// A reservation behind jobs without a time limit names them (the first
// three) in one order whatever order the running jobs come in: the input
// is built from maps, and a detail that changed every cycle would be
// rewritten every cycle.
func TestReservationNamesItsWaitsInOneOrder(t *testing.T) {
	running := []queue.RunningJob{hold("fd", 0, "n4"), hold("fb", 0, "n2"), hold("fa", 0, "n1"), hold("fc", 0, "n3")}
	var details []string
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		var in []queue.RunningJob
		for _, i := range order {
			in = append(in, running[i])
		}
		plan := queue.PlanBackfill(queue.Input{Snapshot: cluster(4, in...), Running: in, Now: now,
			Pending: []queue.PendingJob{job("big", 4, time.Hour, -time.Minute)}})
		details = append(details, plan.Decisions[0].Reason+" | "+plan.Decisions[0].Detail)
	}
	if details[0] != details[1] || details[0] != details[2] {
		t.Errorf("the same plan reads differently by input order:\n%s", strings.Join(details, "\n"))
	}
}
