package queue_test

import (
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
