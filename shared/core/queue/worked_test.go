package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

var now = time.Date(2025, 6, 1, 14, 0, 0, 0, time.UTC)

// hold is a running job on whole nodes.
func hold(id string, limit time.Duration, nodes ...string) queue.RunningJob {
	p := domain.Placement{MasterAddr: nodes[0], MasterPort: 29500}
	for i, n := range nodes {
		p.Nodes = append(p.Nodes, domain.NodePlacement{Node: n, NodeRank: i, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	}
	return queue.RunningJob{ID: id, Queue: "q", Placement: p, StartedAt: now.Add(-time.Hour), TimeLimit: limit}
}

// job is a pending whole-node gang.
func job(id string, nodes int, limit time.Duration, submitted time.Duration) queue.PendingJob {
	return queue.PendingJob{
		ID: id, Queue: "q", SubmittedAt: now.Add(submitted), TimeLimit: limit,
		Request: pt.MakeGang(nodes, 8).ID(id).WaitSince(now.Add(submitted)).Obj(),
	}
}

// cluster builds n idle 8-GPU nodes n1..nN in one leaf and takes the
// running jobs' GPUs.
func cluster(n int, running ...queue.RunningJob) *place.Snapshot {
	b := pt.MakeCluster()
	for i := range n {
		b.Add(pt.MakeNode("n" + string(rune('1'+i))).Leaf("leaf"))
	}
	snap := b.Obj()
	for _, r := range running {
		snap.Take(r.Placement)
	}
	return snap
}

func TestWorkedExample(t *testing.T) {
	running := []queue.RunningJob{hold("r1", 90*time.Minute, "n1"), hold("r2", 2*time.Hour, "n2")}
	in := queue.Input{
		Snapshot: cluster(4, running...), Running: running, Now: now,
		Pending: []queue.PendingJob{
			job("A", 3, time.Hour, -60*time.Minute), job("B", 1, 20*time.Minute, -50*time.Minute),
			job("C", 1, 2*time.Hour, -40*time.Minute), job("D", 1, 0, -30*time.Minute),
		},
	}
	plan := queue.PlanBackfill(in)
	want := map[string]string{"A": "Reserved (starts ≈ 14:30)", "B": "", "C": "Priority", "D": "Priority"}
	for _, d := range plan.Decisions {
		t.Logf("%s %s %q | %s", d.JobID, d.Action, d.Reason, d.Detail)
		if d.Reason != want[d.JobID] {
			t.Errorf("%s: reason %q, want %q", d.JobID, d.Reason, want[d.JobID])
		}
	}
	if b, _ := plan.Find("B"); b.Action != queue.Start || !b.Backfilled {
		t.Errorf("B: %s backfilled=%v, want a backfilled start", b.Action, b.Backfilled)
	}
	res := plan.Reservation
	if res == nil || res.JobID != "A" || !res.Start.Equal(now.Add(30*time.Minute)) ||
		strings.Join(res.Placement.NodeNames(), ",") != "n1,n3,n4" || strings.Join(res.Waits, ",") != "r1" {
		t.Fatalf("reservation %+v, want A at 14:30 on n1,n3,n4 after r1", res)
	}

	fifo := queue.PlanFIFOSkip(in)
	var started []string
	for _, d := range fifo.Starts() {
		started = append(started, d.JobID)
	}
	if strings.Join(started, ",") != "B,C" || fifo.Reservation != nil {
		t.Fatalf("FIFO-skip started %v, want B,C and no reservation", started)
	}
}
