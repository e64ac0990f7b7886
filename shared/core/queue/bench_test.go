package queue_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// benchInput fills a fabric to about 60% with running gangs placed by the
// real placement (time limits 1-8 h, a tenth without) and queues pending
// jobs drawn from pt.Shapes over four queues and four priorities.
func benchInput(f pt.Fabric, pendingJobs int) queue.Input {
	r := rand.New(rand.NewPCG(7, uint64(f.Size())))
	snap := f.Snapshot()
	_, total := snap.Capacity()
	var running []queue.RunningJob
	for i := 0; snap.FreeGPUs() > total*4/10; i++ {
		req := pt.RandomGang(r, fmt.Sprintf("run-%d", i))
		res := place.Place(snap, req, now, uint64(i))
		if res.Code != place.Placed {
			continue
		}
		snap.Take(*res.Placement)
		limit := time.Duration(1+r.IntN(8)) * time.Hour
		if r.IntN(10) == 0 {
			limit = 0
		}
		running = append(running, queue.RunningJob{
			ID: req.JobID, Queue: fmt.Sprintf("q%d", r.IntN(4)), Placement: *res.Placement,
			StartedAt: now.Add(-time.Duration(r.IntN(60)) * time.Minute), TimeLimit: limit,
		})
	}
	var pending []queue.PendingJob
	for i := range pendingJobs {
		sub := now.Add(-time.Duration(r.IntN(600)) * time.Minute)
		req := pt.RandomGang(r, fmt.Sprintf("job-%05d", i))
		req.WaitSince = sub
		req.Topology.WaitForSwitches = 15 * time.Minute
		pending = append(pending, queue.PendingJob{
			ID: req.JobID, Queue: fmt.Sprintf("q%d", r.IntN(4)), Priority: r.IntN(4), SubmittedAt: sub,
			TimeLimit: time.Duration(1+r.IntN(12)) * 30 * time.Minute, Request: req,
		})
	}
	return queue.Input{
		Snapshot: snap, Running: running, Pending: pending, Now: now, Seed: 1,
		Config: queue.Config{Queues: map[string]queue.QueueConfig{"q3": {GPUQuota: total / 10}}},
		Usage:  map[string]float64{"q0": 500, "q1": 100, "q2": 2000, "q3": 0},
	}
}

func benchPlan(b *testing.B, f pt.Fabric, pendingJobs int, policy queue.Policy) {
	in := benchInput(f, pendingJobs)
	if err := in.Snapshot.Prepare(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var plan queue.Plan
	for range b.N {
		plan = policy(in)
	}
	b.StopTimer()
	b.ReportMetric(float64(len(plan.Starts())), "starts")
	b.ReportMetric(float64(len(in.Running)), "running")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N)/float64(pendingJobs), "ms/job")
}

// BenchmarkPlanBackfill10000Nodes plans 10,000 pending jobs on 10,000
// nodes (the scale) about 60% busy: one PlanBackfill call per op.
func BenchmarkPlanBackfill10000Nodes(b *testing.B) {
	benchPlan(b, pt.Fabric10000, 10000, queue.PlanBackfill)
}

func BenchmarkPlanBackfill1024Nodes(b *testing.B) {
	benchPlan(b, pt.Fabric1024, 1000, queue.PlanBackfill)
}

func BenchmarkPlanFIFOSkip10000Nodes(b *testing.B) {
	benchPlan(b, pt.Fabric10000, 10000, queue.PlanFIFOSkip)
}
