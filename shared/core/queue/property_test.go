package queue_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

var small = pt.Fabric{Spines: 2, LeavesPerSpine: 3, NodesPerLeaf: 4, GPUs: 8, Sockets: 2}

// genInput draws a busy 24-node cluster: running jobs placed by the real
// placement (some without limits, some overdue), a few nodes down, and a
// queue of mixed gangs over three queues with quotas and usage.
func genInput(r *rand.Rand) queue.Input {
	snap := small.Snapshot()
	limits := []time.Duration{0, time.Hour, 2 * time.Hour, 4 * time.Hour}
	var running []queue.RunningJob
	for i := range 12 {
		req := place.Request{JobID: fmt.Sprintf("r%d", i), Nodes: 1 + r.IntN(3), GPUsPerNode: []int{2, 4, 8}[r.IntN(3)]}
		req.TasksPerNode = req.GPUsPerNode // one rank per GPU, the spec's default
		res := place.Place(snap, req, now, uint64(i))
		if res.Code != place.Placed {
			continue
		}
		snap.Take(*res.Placement)
		running = append(running, queue.RunningJob{
			ID: req.JobID, Queue: []string{"a", "b", "c"}[r.IntN(3)], Placement: *res.Placement,
			StartedAt: now.Add(-time.Duration(r.IntN(180)) * time.Minute), TimeLimit: limits[r.IntN(4)],
		})
	}
	for range r.IntN(3) {
		snap.Nodes[r.IntN(len(snap.Nodes))].Up = false
	}
	var pending []queue.PendingJob
	for i := range 3 + r.IntN(20) {
		sub := now.Add(-time.Duration(r.IntN(120)) * time.Minute)
		req := place.Request{
			JobID: fmt.Sprintf("p%02d", i), Nodes: 1 + r.IntN(6), GPUsPerNode: []int{1, 2, 4, 8}[r.IntN(4)], WaitSince: sub,
		}
		req.TasksPerNode = req.GPUsPerNode
		switch r.IntN(5) {
		case 0:
			req.Topology.MaxSwitches, req.Topology.WaitForSwitches = 1, 30*time.Minute
		case 1:
			req.Topology.Required = place.LevelLeaf
		}
		pending = append(pending, queue.PendingJob{
			ID: req.JobID, Queue: []string{"a", "b", "c"}[r.IntN(3)], Priority: r.IntN(3), SubmittedAt: sub,
			TimeLimit: []time.Duration{0, 15 * time.Minute, time.Hour, 3 * time.Hour}[r.IntN(4)], Request: req,
		})
	}
	return queue.Input{
		Snapshot: snap, Running: running, Pending: pending, Now: now, Seed: r.Uint64(),
		Config: queue.Config{Queues: map[string]queue.QueueConfig{
			"b": {GPUQuota: 32 + 8*r.IntN(8), Weight: 2}, "c": {GPUQuota: 16 + 8*r.IntN(4)},
		}},
		Usage: map[string]float64{"a": r.Float64() * 100, "b": r.Float64() * 100, "c": r.Float64() * 100},
	}
}

func TestPlanProperties(t *testing.T) {
	reserved := 0
	for seed := range uint64(planCases) {
		r := rand.New(rand.NewPCG(seed, 0x9e9e))
		in := genInput(r)
		before := pt.DeepCopy(in.Snapshot)
		plan := queue.PlanBackfill(in)
		fail := func(format string, args ...any) {
			t.Helper()
			data, _ := in.Marshal()
			t.Fatalf("seed %d: %s\ninput: %s", seed, fmt.Sprintf(format, args...), data)
		}
		if !reflect.DeepEqual(in.Snapshot.Nodes, before.Nodes) {
			fail("PlanBackfill changed its input snapshot")
		}
		if len(plan.Decisions) != len(in.Pending) {
			fail("%d decisions for %d jobs", len(plan.Decisions), len(in.Pending))
		}
		// Starts fit the free GPUs together, and quotas hold.
		after := in.Snapshot.Clone()
		held := map[string]int{}
		for _, rj := range in.Running {
			held[rj.Queue] += rj.GPUCount()
		}
		var started []queue.RunningJob
		for _, d := range plan.Decisions {
			switch {
			case d.Action == queue.Start:
				checkFree(t, seed, after, d)
				after.Take(*d.Placement)
				held[d.Queue] += d.Placement.GPUCount()
				j := findJob(in.Pending, d.JobID)
				started = append(started, queue.RunningJob{ID: j.ID, Queue: j.Queue, Placement: *d.Placement, StartedAt: now, TimeLimit: j.TimeLimit})
			case d.ReasonCode == queue.ReasonReserved && (plan.Reservation == nil || plan.Reservation.JobID != d.JobID):
				fail("%s says Reserved but the reservation is %+v", d.JobID, plan.Reservation)
			case d.ReasonCode == queue.ReasonPriority && plan.Reservation == nil:
				fail("%s waits for Priority without a reservation", d.JobID)
			}
		}
		for q, n := range held {
			if quota := in.Config.Queue(q).GPUQuota; quota > 0 && n > quota {
				started := 0
				for _, d := range plan.Starts() {
					if d.Queue == q {
						started++
					}
				}
				if started > 0 {
					fail("queue %s holds %d GPUs over its quota of %d", q, n, quota)
				}
			}
		}
		// Same input, same plan; and after a JSON round trip.
		if again := queue.PlanBackfill(in); !reflect.DeepEqual(again, plan) {
			fail("second plan differs")
		}
		data, err := in.Marshal()
		if err != nil {
			fail("%v", err)
		}
		back, err := queue.UnmarshalInput(data)
		if err != nil {
			fail("%v", err)
		}
		if replayed := queue.PlanBackfill(back); !reflect.DeepEqual(replayed, plan) {
			fail("replayed plan differs")
		}
		// EASY: what the plan starts does not delay the reservation.
		res := plan.Reservation
		if res == nil || !res.Known() {
			continue
		}
		reserved++
		again := queue.PlanBackfill(queue.Input{
			Snapshot: after, Running: append(slices.Clone(in.Running), started...), Now: now, Seed: in.Seed,
			Pending: []queue.PendingJob{findJob(in.Pending, res.JobID)},
		})
		if again.Reservation == nil || !again.Reservation.Known() || again.Reservation.Start.After(res.Start) {
			fail("the plan's starts delay %s from %s to %+v", res.JobID, res.Start.Format("15:04"), again.Reservation)
		}
	}
	t.Logf("%d of %d plans had a known reservation", reserved, planCases)
	if reserved < planCases/6 {
		t.Fatalf("only %d plans had a reservation; the generator is too loose", reserved)
	}
}

func checkFree(t *testing.T, seed uint64, snap *place.Snapshot, d queue.Decision) {
	t.Helper()
	for _, np := range d.Placement.Nodes {
		i := slices.IndexFunc(snap.Nodes, func(n place.NodeView) bool { return n.Node.Name == np.Node })
		if i < 0 || !snap.Nodes[i].Up {
			t.Fatalf("seed %d: %s starts on missing or down node %s", seed, d.JobID, np.Node)
		}
		for _, g := range np.GPUs {
			if !slices.Contains(snap.Nodes[i].Free, g) {
				t.Fatalf("seed %d: %s starts on busy GPU %d of %s", seed, d.JobID, g, np.Node)
			}
		}
	}
}

func findJob(jobs []queue.PendingJob, id string) queue.PendingJob {
	return jobs[slices.IndexFunc(jobs, func(j queue.PendingJob) bool { return j.ID == id })]
}

// planCases is how many inputs the property test draws
// (QUEUE_PROPERTY_CASES overrides).
var planCases = 300

func init() {
	if n, err := strconv.Atoi(os.Getenv("QUEUE_PROPERTY_CASES")); err == nil && n > 0 {
		planCases = n
	}
}
