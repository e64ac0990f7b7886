package view

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Sample is what the web service saw at one moment: it keeps one after
// every change it follows (at most one a second), since it started.
type Sample struct {
	At                time.Time
	UsedGPUs, GPUs    int
	Pending, Running  int
	FreeGPUs, UpNodes int
}

// ClusterInput is what the cluster page is built from.
type ClusterInput struct {
	Samples []Sample
	// Jobs are the records of unfinished jobs, Ended what the page needs
	// of finished ones (a replica keeps every finished job the bucket
	// retains, so it keeps little of each).
	Jobs   []domain.Job
	Ended  []Ended
	Fabric Fabric
	Now    time.Time
}

// Ended is what the cluster page needs of a finished job's record.
type Ended struct {
	State              domain.State
	Queue              string
	RunningAt, EndedAt time.Time
	Timing             domain.Timing
}

// EndedOf keeps what the cluster page needs of a finished job's record.
func EndedOf(j domain.Job) Ended {
	return Ended{State: j.State, Queue: j.Spec.Queue, RunningAt: j.RunningAt, EndedAt: j.EndedAt, Timing: j.Timing}
}

// Cluster is the cluster page.
type Cluster struct {
	Nodes, Down, Drained int
	GPUs, Used, Free     int
	Unhealthy            int
	Utilization          string
	ByState              []StateCount
	Queues               []QueueUsage
	MeanEfficiency       string
	MeanGangWait         string
	Utilisation, Waiting Plot
	Efficiency, GangWait Plot
}

// StateCount is how many jobs are in one state.
type StateCount struct {
	State domain.State
	Count int
}

// QueueUsage is one queue's share of the cluster.
type QueueUsage struct {
	Name             string
	GPUs             int
	Running, Pending int
	// Percent is the queue's share of the cluster's GPUs.
	Percent float64
}

// allStates is the order jobs by state are listed in.
var allStates = []domain.State{
	domain.StatePending, domain.StateReserved, domain.StateRunning, domain.StateSucceeded,
	domain.StateFailed, domain.StateCancelled, domain.StateTimeout, domain.StateRejected,
}

// BuildCluster builds the cluster page: totals from the fabric, jobs by
// state and per queue from the records, and plots of the samples (GPU
// utilisation and pending jobs) and of the finished jobs' η and the
// started jobs' gang wait.
func BuildCluster(in ClusterInput) Cluster {
	f := in.Fabric
	c := Cluster{
		Nodes: f.Nodes, Down: f.Down, Drained: f.Drained, GPUs: f.GPUs, Used: f.Used, Free: f.Free, Unhealthy: f.Unhealthy,
		Utilization: fmt.Sprintf("%.1f%%", Percent(f.Used, f.GPUs)), MeanEfficiency: "—", MeanGangWait: "—",
	}
	counts := map[domain.State]int{}
	queues := map[string]*QueueUsage{}
	var eta, wait []Point
	var etaSum float64
	var waitSum time.Duration
	add := func(j Ended, gpus int) {
		counts[j.State]++
		q := queues[j.Queue]
		if q == nil {
			q = &QueueUsage{Name: j.Queue}
			queues[j.Queue] = q
		}
		switch {
		case j.State.Active():
			q.Running++
			q.GPUs += gpus
		case j.State == domain.StatePending:
			q.Pending++
		}
		if e := j.Timing.Efficiency(); e > 0 && j.State.Terminal() {
			eta = append(eta, Point{At: j.EndedAt, Y: 100 * e})
			etaSum += e
		}
		if !j.RunningAt.IsZero() {
			wait = append(wait, Point{At: j.RunningAt, Y: j.Timing.GangWait.Seconds()})
			waitSum += j.Timing.GangWait
		}
	}
	for _, j := range in.Jobs {
		add(EndedOf(j), j.Spec.GPUs())
	}
	for _, j := range in.Ended {
		add(j, 0)
	}
	for _, s := range allStates {
		c.ByState = append(c.ByState, StateCount{State: s, Count: counts[s]})
	}
	for _, q := range queues {
		q.Percent = Percent(q.GPUs, f.GPUs)
		c.Queues = append(c.Queues, *q)
	}
	slices.SortFunc(c.Queues, func(a, b QueueUsage) int { return cmp.Or(cmp.Compare(b.GPUs, a.GPUs), cmp.Compare(a.Name, b.Name)) })
	if len(eta) > 0 {
		c.MeanEfficiency = fmt.Sprintf("%.1f%%", 100*etaSum/float64(len(eta)))
	}
	if len(wait) > 0 {
		c.MeanGangWait = Age(waitSum / time.Duration(len(wait)))
	}
	util := make([]Point, len(in.Samples))
	pending := make([]Point, len(in.Samples))
	for i, s := range in.Samples {
		util[i] = Point{At: s.At, Y: Percent(s.UsedGPUs, s.GPUs)}
		pending[i] = Point{At: s.At, Y: float64(s.Pending)}
	}
	c.Utilisation = BuildPlot("GPU utilisation", "%", util, 100)
	c.Waiting = BuildPlot("pending jobs", "", pending, 0)
	c.Efficiency = BuildPlot("η of finished jobs", "%", eta, 100)
	c.GangWait = BuildPlot("gang wait of started jobs", "s", wait, 0)
	return c
}
