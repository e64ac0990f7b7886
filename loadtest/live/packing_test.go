package live

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
)

// The live packing line counts a multi-node gang on more leaves than the
// idle cluster needs, bounds the makespan as the simulator does, and
// leaves out jobs that did not succeed.
func TestPackingOfALiveRun(t *testing.T) {
	// 4 nodes × 8 GPUs, 2 nodes per leaf: n-00001,2 on leaf 1, n-00003,4 on leaf 2.
	c, err := fabric.Generated{Nodes: 4, NodesPerLeaf: 2, LeavesPerSpine: 2, GPUs: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cfg := Config{Cluster: c, Jobs: []trace.Job{
		{Submit: 0, Duration: 10 * time.Second, Nodes: 2, GPUsPerNode: 8},            // compact
		{Submit: 0, Duration: 10 * time.Second, Nodes: 2, GPUsPerNode: 8},            // spread over both leaves
		{Submit: time.Second, Duration: 4 * time.Second, Nodes: 1, GPUsPerNode: 8},   // one node
		{Submit: time.Second, Duration: 100 * time.Second, Nodes: 4, GPUsPerNode: 8}, // failed: not counted
	}}
	ids := []string{"j0", "j1", "j2", "j3"}
	tls := map[string]timeline{
		"j0": {submitted: at(0), reserved: at(0.4), running: at(0.5), ended: at(10.5), final: events.Succeeded, nodes: []string{"n-00001", "n-00002"}},
		"j1": {submitted: at(0), reserved: at(1.8), running: at(2), ended: at(12), final: events.Succeeded, nodes: []string{"n-00002", "n-00003"}},
		// Requeued once: its last reservation's hold says nothing of the first's.
		"j2": {submitted: at(1), reserved: at(12.9), running: at(13), ended: at(17), final: events.Succeeded, nodes: []string{"n-00004"}, requeues: 1},
		"j3": {submitted: at(1), running: at(20), ended: at(21), final: events.Failed, nodes: []string{"n-00001"}},
	}
	p := packing(cfg, t0, ids, tls)
	if p.MultiNodeJobs != 2 || p.ExtraLeafJobs != 1 {
		t.Errorf("multi-node %d, extra-leaf %d; want 2, 1", p.MultiNodeJobs, p.ExtraLeafJobs)
	}
	// GPU time 16×10 + 16×10 + 8×4 = 352 GPU s over 32 GPUs = 11 s; the
	// latest submit + run time is 10 s: the bound is 11 s.
	if p.MakespanS != 17 || p.LowerBoundS != 11 {
		t.Errorf("makespan %v s, bound %v s; want 17, 11", p.MakespanS, p.LowerBoundS)
	}
	if want := 352.0 / (32 * 17); p.Utilization != want {
		t.Errorf("utilisation %v, want %v", p.Utilization, want)
	}
	if d := p.StartByNodes[2]; d.N != 2 || d.Max != 2000 {
		t.Errorf("2-node starts %+v, want 2 of them, the slower 2000 ms", d)
	}
	if d := p.StartByNodes[1]; d.N != 1 || d.P50 != 12000 {
		t.Errorf("1-node starts %+v, want one of 12000 ms", d)
	}
	if _, ok := p.StartByNodes[4]; ok {
		t.Error("the failed 4-node job was counted")
	}
	// j0 and j1 overlap; j2 starts after both ended; j3 failed.
	if p.MostHolding != 2 {
		t.Errorf("most jobs holding GPUs at once %d, want 2", p.MostHolding)
	}
	// j0 held its GPUs 10.1 s for 10 s of work, j1 10.2 s; j2 was requeued.
	if d := p.HoldOverheadMs; d.N != 2 || d.Mean != 150 || d.Max != 200 {
		t.Errorf("hold overhead %+v, want 100 and 200 ms", d)
	}
	// 3,552 GPU s asked for over 1 s of submissions on 32 GPUs.
	if want := 3552.0 / 32; p.OfferedLoad != want {
		t.Errorf("offered load %v, want %v", p.OfferedLoad, want)
	}
	line := packingLine(p) + loadLine(p)
	for _, want := range []string{"1 of 2 multi-node jobs on extra leaves", "1.545 × its lower bound", "1: 12.0 s, 2: ", "at most 2 jobs held GPUs at once",
		"Load: the stream asks for 11100.0 % of the cluster's GPU time", "(p50; mean 150, p99 "} {
		if !strings.Contains(line, want) {
			t.Errorf("packing and load lines %q lack %q", line, want)
		}
	}
}

// A probe's gangs, one after another on an idle cluster, start in tens
// of milliseconds: the line says so in milliseconds and that one job at a
// time held GPUs, a job that ends as the next starts not overlapping it.
func TestPackingOfAProbe(t *testing.T) {
	c, err := fabric.Generated{Nodes: 4, NodesPerLeaf: 2, LeavesPerSpine: 2, GPUs: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	cfg := Config{Cluster: c, Jobs: []trace.Job{
		{Submit: 0, Duration: time.Second, Nodes: 1, GPUsPerNode: 8},
		{Submit: 2 * time.Second, Duration: time.Second, Nodes: 2, GPUsPerNode: 8},
		{Submit: 4 * time.Second, Duration: time.Second, Nodes: 2, GPUsPerNode: 8},
	}}
	ids := []string{"p0", "p1", "p2"}
	tls := map[string]timeline{
		"p0": {submitted: ms(0), reserved: ms(40), running: ms(60), ended: ms(1060), final: events.Succeeded, nodes: []string{"n-00001"}},
		"p1": {submitted: ms(2000), reserved: ms(2030), running: ms(2080), ended: ms(4010), final: events.Succeeded, nodes: []string{"n-00001", "n-00002"}},
		// Reserved the instant p1 ended: it takes what p1 let go.
		"p2": {submitted: ms(4000), reserved: ms(4010), running: ms(4080), ended: ms(5080), final: events.Succeeded, nodes: []string{"n-00003", "n-00004"}},
	}
	p := packing(cfg, t0, ids, tls)
	if p.MostHolding != 1 {
		t.Errorf("most jobs holding GPUs at once %d, want 1", p.MostHolding)
	}
	line := packingLine(p)
	for _, want := range []string{"gang start p50 by nodes 1: 60 ms, 2: 80 ms", "at most 1 job held GPUs at once"} {
		if !strings.Contains(line, want) {
			t.Errorf("packing line %q lacks %q", line, want)
		}
	}
}

// A burst has no submission span to spread its load over, and a run
// whose jobs all failed held nothing worth measuring: the load line then
// says only what it knows, or nothing.
func TestLoadLine(t *testing.T) {
	c, err := fabric.Generated{Nodes: 2, NodesPerLeaf: 2, LeavesPerSpine: 1, GPUs: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	burst := Config{Cluster: c, Jobs: []trace.Job{
		{Submit: 0, Duration: time.Second, Nodes: 1, GPUsPerNode: 8},
		{Submit: 5 * time.Millisecond, Duration: time.Second, Nodes: 2, GPUsPerNode: 8},
	}}
	if got := offeredLoad(burst); got != 0 {
		t.Errorf("a burst's offered load %v, want 0 (no span)", got)
	}
	if got := loadLine(Packing{}); got != "" {
		t.Errorf("load line with nothing measured %q, want none", got)
	}
	stream := Config{Cluster: c, Jobs: []trace.Job{
		{Submit: 0, Duration: time.Second, Nodes: 1, GPUsPerNode: 8},
		{Submit: 2 * time.Second, Duration: time.Second, Nodes: 2, GPUsPerNode: 8},
	}}
	// 24 GPU s over 16 GPUs × 2 s.
	if got := offeredLoad(stream); got != 0.75 {
		t.Errorf("offered load %v, want 0.75", got)
	}
	line := loadLine(Packing{OfferedLoad: 0.75})
	if want := "Load: the stream asks for 75.0 % of the cluster's GPU time over its submissions.\n\n"; line != want {
		t.Errorf("load line %q, want %q", line, want)
	}
}
