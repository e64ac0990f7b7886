package sim

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

const s = time.Second

func cluster(t *testing.T, nodes, perLeaf, leavesPerSpine int) *fabric.Cluster {
	t.Helper()
	c, err := fabric.Generated{Nodes: nodes, NodesPerLeaf: perLeaf, LeavesPerSpine: leavesPerSpine, GPUs: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run simulates and returns the engine, for per-job checks.
func run(t *testing.T, cfg Config) (*engine, Result) {
	t.Helper()
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(cfg)
	e.run()
	return e, e.m.result(e)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Three jobs on two 8-GPU nodes under one leaf, worked by hand:
//
//	A at 0 s: 1 node, 100 s.   B at 10 s: 2 nodes, 50 s.   C at 20 s: 1 node, 30 s.
//
// B cannot start until A ends at 100. C fits beside A at 20 and, with a
// 30 s limit, ends (50) before B's reserved start (100): backfill and FIFO
// with skipping start it at once; Slurm's main scheduler stops at B and
// its backfill pass runs at the next 30 s tick; per-pod binds one of B's
// pods at 10, which idles its node until A ends, so C waits for B.
func TestHandComputed(t *testing.T) {
	jobs := []trace.Job{
		{ID: "a", Submit: 0, Duration: 100 * s, Nodes: 1, GPUsPerNode: 8},
		{ID: "b", Submit: 10 * s, Duration: 50 * s, Nodes: 2, GPUsPerNode: 8},
		{ID: "c", Submit: 20 * s, Duration: 30 * s, Nodes: 1, GPUsPerNode: 8},
	}
	type want struct {
		starts      [3]time.Duration
		meanDelay   float64
		makespan    float64
		util, busy  float64
		partialGPUh float64
	}
	cases := map[Policy]want{
		// Useful GPU-seconds: 8·100 + 16·50 + 8·30 = 1,840 on 16 GPUs.
		Lockstep:  {starts: [3]time.Duration{0, 100 * s, 20 * s}, meanDelay: 30, makespan: 150, util: 1840.0 / (16 * 150), busy: 1840.0 / (16 * 150)},
		GangBlind: {starts: [3]time.Duration{0, 100 * s, 20 * s}, meanDelay: 30, makespan: 150, util: 1840.0 / (16 * 150), busy: 1840.0 / (16 * 150)},
		SlurmLike: {starts: [3]time.Duration{0, 100 * s, 30 * s}, meanDelay: 100.0 / 3, makespan: 150, util: 1840.0 / (16 * 150), busy: 1840.0 / (16 * 150)},
		// B's first pod holds 8 GPUs from 10 to 100: 720 GPU-seconds.
		PerPod: {starts: [3]time.Duration{0, 100 * s, 150 * s}, meanDelay: (0 + 90 + 130) / 3.0, makespan: 180,
			util: 1840.0 / (16 * 180), busy: (1840.0 + 720) / (16 * 180), partialGPUh: 720.0 / 3600},
	}
	for pol, w := range cases {
		t.Run(string(pol), func(t *testing.T) {
			e, r := run(t, Config{Cluster: cluster(t, 2, 2, 1), Jobs: jobs, Policy: pol, Seed: 1})
			for i, st := range w.starts {
				if e.jobs[i].start != st {
					t.Errorf("job %s started at %v, want %v", e.jobs[i].ID, e.jobs[i].start, st)
				}
			}
			if r.Completed != 3 || !near(r.QueueDelay.Mean, w.meanDelay) || !near(r.Makespan, w.makespan) {
				t.Errorf("completed %d, mean delay %g, makespan %g; want 3, %g, %g", r.Completed, r.QueueDelay.Mean, r.Makespan, w.meanDelay, w.makespan)
			}
			if !near(r.Utilization, w.util) || !near(r.BusyUtilization, w.busy) {
				t.Errorf("utilization %g (busy %g), want %g (busy %g)", r.Utilization, r.BusyUtilization, w.util, w.busy)
			}
			if !near(r.PartialGangGPUHours, w.partialGPUh) {
				t.Errorf("partial-gang GPU-hours %g, want %g", r.PartialGangGPUHours, w.partialGPUh)
			}
			// η = Σ durations / Σ JCT = 180 / Σ (end − submit).
			var jct float64
			for _, j := range e.jobs {
				jct += (j.end - j.Submit).Seconds()
			}
			if !near(r.Eta, 180/jct) {
				t.Errorf("η %g, want %g", r.Eta, 180/jct)
			}
			if r.MultiNodeJobs != 1 || r.MinLeaves != 1 {
				t.Errorf("multi-node %d on min leaves %d, want 1 and 1", r.MultiNodeJobs, r.MinLeaves)
			}
		})
	}
}

// The jobs of TestHandComputed, every one asking a 200 s limit: by its
// limit C would run until 220, past B's reserved start (A's limit ends it
// at 200), so it is not backfilled beside A; A ends at 100, B starts then,
// and C after B, at 150.
func TestOneTimeLimitForEveryJob(t *testing.T) {
	jobs := []trace.Job{
		{ID: "a", Submit: 0, Duration: 100 * s, Nodes: 1, GPUsPerNode: 8},
		{ID: "b", Submit: 10 * s, Duration: 50 * s, Nodes: 2, GPUsPerNode: 8},
		{ID: "c", Submit: 20 * s, Duration: 30 * s, Nodes: 1, GPUsPerNode: 8},
	}
	e, _ := run(t, Config{Cluster: cluster(t, 2, 2, 1), Jobs: jobs, Policy: Lockstep, Seed: 1, TimeLimit: 200 * s, LimitFactor: 3})
	for i, want := range []time.Duration{0, 100 * s, 150 * s} {
		if got := e.jobs[i].start; got != want {
			t.Errorf("job %s started at %v, want %v", e.jobs[i].ID, got, want)
		}
		if got := e.jobs[i].pj.TimeLimit; got != 200*s {
			t.Errorf("job %s has limit %v, want the stream's 200s over the factor's", e.jobs[i].ID, got)
		}
	}
}

// A 2-node gang on a cluster whose two nodes sit under different leaves
// and spines runs 1 + 0.05 + 0.20 = 1.25 times longer.
func TestStretch(t *testing.T) {
	jobs := []trace.Job{{ID: "x", Duration: 100 * s, Nodes: 2, GPUsPerNode: 8}}
	for _, pol := range Policies {
		e, r := run(t, Config{Cluster: cluster(t, 2, 1, 1), Jobs: jobs, Policy: pol})
		if got := e.jobs[0].end; got != 125*s {
			t.Errorf("%s: ended at %v, want 125s", pol, got)
		}
		if !near(r.StretchGPUHours, 16*25.0/3600) || !near(r.Utilization, 1600.0/(16*125)) {
			t.Errorf("%s: stretch %g GPU-h, utilization %g", pol, r.StretchGPUHours, r.Utilization)
		}
	}
}

// Lockstep keeps a 2-node gang within one leaf when one is free; the
// topology-blind policies need not.
func TestLockstepUsesOneLeaf(t *testing.T) {
	jobs := []trace.Job{
		{ID: "x", Duration: 1000 * s, Nodes: 1, GPUsPerNode: 8},
		{ID: "y", Submit: s, Duration: 100 * s, Nodes: 2, GPUsPerNode: 8},
	}
	e, r := run(t, Config{Cluster: cluster(t, 4, 2, 1), Jobs: jobs, Policy: Lockstep, Seed: 7})
	if e.jobs[1].leaves != 1 || e.jobs[1].end != 101*s || r.MinLeavesShare != 1 {
		t.Errorf("y on %d leaves, ended %v, min-leaves share %g; want 1 leaf, 101s, 1", e.jobs[1].leaves, e.jobs[1].end, r.MinLeavesShare)
	}
}

// A job larger than the cluster is counted, not queued forever.
func TestUnschedulable(t *testing.T) {
	jobs := []trace.Job{{ID: "big", Duration: s, Nodes: 3, GPUsPerNode: 8}, {ID: "ok", Duration: s, Nodes: 1, GPUsPerNode: 8}}
	for _, pol := range Policies {
		_, r := run(t, Config{Cluster: cluster(t, 2, 2, 1), Jobs: jobs, Policy: pol})
		if r.Unschedulable != 1 || r.Completed != 1 {
			t.Errorf("%s: unschedulable %d, completed %d; want 1, 1", pol, r.Unschedulable, r.Completed)
		}
	}
}

func synthetic(t *testing.T, n int, seed uint64) []trace.Job {
	t.Helper()
	sizes, _ := trace.ParseSizes("1x1:40,1x2:10,1x4:10,1x8:15,2x8:12,4x8:8,8x8:4,16x8:1")
	durs, _ := trace.ParseDurations("1m:30,10m:30,1h:25,6h:15")
	jobs, err := trace.Synthetic{Rate: 1.0 / 60, Count: n, Sizes: sizes, Durations: durs, Poisson: true, Seed: seed}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// The same configuration gives the same result, to the bit.
func TestDeterministic(t *testing.T) {
	jobs := synthetic(t, 500, 5)
	c := cluster(t, 16, 4, 2)
	for _, pol := range Policies {
		var out [2][]byte
		for k := range out {
			r, err := Run(Config{Cluster: c, Jobs: jobs, Policy: pol, Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			r.Wall, r.CPU = 0, 0
			out[k], _ = json.Marshal(r)
		}
		if string(out[0]) != string(out[1]) {
			t.Errorf("%s: two runs differ", pol)
		}
	}
}

// Invariants on a busy synthetic stream: every job accounted for, no
// partial gangs outside per-pod, utilization within bounds.
func TestInvariants(t *testing.T) {
	jobs := synthetic(t, 1000, 9)
	c := cluster(t, 16, 4, 2)
	for _, pol := range Policies {
		e, r := run(t, Config{Cluster: c, Jobs: jobs, Policy: pol, Seed: 3})
		if r.Completed+r.Unschedulable != len(jobs) {
			t.Errorf("%s: %d completed + %d unschedulable of %d", pol, r.Completed, r.Unschedulable, len(jobs))
		}
		if r.QueueDelay.P90 == 0 {
			t.Errorf("%s: the stream is too light to test anything (p90 delay 0)", pol)
		}
		if pol != PerPod && r.PartialGangGPUHours != 0 {
			t.Errorf("%s: %g partial-gang GPU-hours", pol, r.PartialGangGPUHours)
		}
		if r.Utilization <= 0 || r.Utilization > r.BusyUtilization+1e-9 || r.BusyUtilization > 1+1e-9 {
			t.Errorf("%s: utilization %g, busy %g", pol, r.Utilization, r.BusyUtilization)
		}
		if e.free != c.GPUs() || len(e.running) != 0 {
			t.Errorf("%s: %d GPUs free and %d running at the end", pol, e.free, len(e.running))
		}
		for _, j := range e.jobs {
			if j.state == stDone && j.start < j.Submit {
				t.Fatalf("%s: job %s started before its submission", pol, j.ID)
			}
		}
	}
}

// Lockstep's switch wait starts when a gang is first runnable, not at
// submission: g (submitted at 1 s, 1,000 s wait for one leaf) can first
// start at 5,000 s, on one node of each leaf; it waits until 6,000 s for
// one leaf and then takes two, unless a leaf frees up before (b ends at
// 5,500 s). Counted from submission, the wait would have been over and g
// would have started on two leaves at 5,000 s.
func TestSwitchWaitFromFirstRunnable(t *testing.T) {
	for _, c := range []struct {
		bEnds, start time.Duration
		leaves       int
	}{
		{bEnds: 50_000 * s, start: 6_000 * s, leaves: 2},
		{bEnds: 5_500 * s, start: 5_500 * s, leaves: 1},
	} {
		jobs := []trace.Job{
			{ID: "a", Duration: 5_000 * s, Nodes: 1, GPUsPerNode: 8},
			{ID: "b", Duration: c.bEnds, Nodes: 1, GPUsPerNode: 8},
			{ID: "c", Duration: 50_000 * s, Nodes: 1, GPUsPerNode: 8},
			{ID: "d", Duration: 5_000 * s, Nodes: 1, GPUsPerNode: 8},
			{ID: "g", Submit: s, Duration: 100 * s, Nodes: 2, GPUsPerNode: 8},
		}
		e, _ := run(t, Config{Cluster: cluster(t, 4, 2, 1), Jobs: jobs, Policy: Lockstep, Seed: 1, SwitchWait: 1_000 * s})
		names := func(i int) []string { return e.jobs[i].place.NodeNames() }
		if l, _ := e.c.Span(append(names(0), names(1)...)); l != 1 {
			t.Fatalf("setup: a and b on %d leaves, want 1", l)
		}
		if g := e.jobs[4]; g.start != c.start || g.leaves != c.leaves {
			t.Errorf("b ends at %v: g started at %v on %d leaves, want %v on %d", c.bEnds, g.start, g.leaves, c.start, c.leaves)
		}
	}
}
