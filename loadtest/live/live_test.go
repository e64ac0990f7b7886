package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// workload builds the cluster g (8 nodes of 8 GPUs per leaf, named vn…)
// and the stream syn generates with seed 1 from sizes and durations, as
// the command line writes them.
func workload(t *testing.T, g fabric.Generated, sizes, durations string, syn trace.Synthetic) (*fabric.Cluster, []trace.Job) {
	t.Helper()
	g.NodesPerLeaf, g.GPUs, g.Prefix = 8, 8, "vn"
	c, err := g.Build()
	if err != nil {
		t.Fatal(err)
	}
	if syn.Sizes, err = trace.ParseSizes(sizes); err != nil {
		t.Fatal(err)
	}
	if syn.Durations, err = trace.ParseDurations(durations); err != nil {
		t.Fatal(err)
	}
	syn.Seed = 1
	jobs, err := syn.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return c, jobs
}

// A small live run against the real services (embedded cluster): every
// submitted job is accounted for in the events seen, latencies are
// non-negative and ordered, and the ratio to raw etcd is computed.
func TestSmallLiveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c, jobs := workload(t, fabric.Generated{Nodes: 64, LeavesPerSpine: 4}, "1x8:2,2x8:2,4x8:1", "200ms:1,500ms:1",
		trace.Synthetic{Rate: 20, Span: 2 * time.Second, ConstrainedShare: 0.5, SwitchWait: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{
		DataDir: t.TempDir(), NoFsync: true, Cluster: c, Jobs: jobs, NodesPerLease: 20,
		RawTxns: 50, Drain: time.Minute, Deadline: 90 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.BookkeepingOK() {
		t.Fatalf("bookkeeping: %v", res.Bookkeeping)
	}
	if res.Submitted != len(jobs) || res.Succeeded != len(jobs) || res.Admitted != len(jobs) {
		t.Errorf("submitted %d, admitted %d, succeeded %d of %d", res.Submitted, res.Admitted, res.Succeeded, len(jobs))
	}
	for _, d := range [][]float64{res.AdmittedMs, res.ReservedMs, res.RunningMs} {
		for _, x := range d {
			if x < 0 {
				t.Fatalf("negative latency %g ms", x)
			}
		}
	}
	if res.ToAdmitted.P50 > res.ToRunning.P50 || res.ToReserved.Max > res.ToRunning.Max+1 {
		t.Errorf("latencies out of order: admitted %+v, reserved %+v, running %+v", res.ToAdmitted, res.ToReserved, res.ToRunning)
	}
	// The legs of submit → running count every job not requeued, and the
	// report gives them.
	if len(res.Stages) != 4 {
		t.Errorf("stages %+v, want four legs", res.Stages)
	}
	for _, st := range res.Stages {
		if st.Ms.N < len(jobs)-res.Requeues || st.Ms.Max < 0 {
			t.Errorf("leg %q: %+v, want the %d jobs not requeued", st.Name, st.Ms, len(jobs)-res.Requeues)
		}
	}
	if md := (Report{Result: res}).Summary(); !strings.Contains(md, StageBarrier) {
		t.Errorf("report does not give the legs:\n%s", md)
	}
	if res.RawPerSec <= 0 || res.RatioToRaw <= 0 {
		t.Errorf("raw %g Txn/s, ratio %g", res.RawPerSec, res.RatioToRaw)
	}
	// Every node of every gang started and exited once.
	var ranks int64
	for _, j := range jobs {
		ranks += int64(j.Nodes)
	}
	if res.Agents.Started != ranks || res.Agents.Exited != ranks || res.Agents.PublishFailures != 0 {
		t.Errorf("agents %+v, want %d started and exited", res.Agents, ranks)
	}
	if !res.Usage.Measured || res.Usage.CPUSeconds <= 0 {
		t.Errorf("usage not measured: %+v", res.Usage)
	}
	// Placement plans at least once a second while it leads.
	if p := res.Placement; p == nil || p.Cycles < 2 || p.Seconds <= 0 || p.WallSeconds <= 0 || p.PerSecond() <= 0 {
		t.Errorf("placement cycles not counted: %+v", p)
	} else if md := (Report{Result: res}).Summary(); !strings.Contains(md, "Placement planned") {
		t.Errorf("report does not give placement's cycles:\n%s", md)
	}
	// Every gang's allocation was written and released, and its GPUs
	// claimed, each 8-GPU node whole by one key: put at the reservation
	// and again at the barrier, deleted at the end (never one per GPU);
	// the report says so per job.
	w := res.EtcdWrites
	if w == nil {
		t.Fatal("etcd writes not counted")
	}
	a, claims := w.Families["alloc"], w.Families["claims"]
	if a.Puts < len(jobs) || a.Deletes < len(jobs) || w.Revisions < int64(len(jobs)) {
		t.Errorf("etcd writes %+v: want at least %d allocations put and deleted", w, len(jobs))
	}
	if claims.Puts < 2*int(ranks) || claims.Deletes < int(ranks) || claims.Puts >= 8*int(ranks) {
		t.Errorf("claims %+v: want a key per node (%d nodes): at least %d puts and %d deletes, fewer than one per GPU", claims, ranks, 2*ranks, ranks)
	}
	if md := (Report{Result: res}).Summary(); !strings.Contains(md, "| alloc/ |") {
		t.Errorf("report has no etcd key family table:\n%s", md)
	}
	if err := (Report{Run: report.Run{Kind: "loadtest"}, Result: res}).Write(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func TestHelpers(t *testing.T) {
	if got := runTime([]string{"sleep", "1.5"}); got != 1500*time.Millisecond {
		t.Errorf("runTime(sleep 1.5) = %v", got)
	}
	if got := runTime([]string{"true"}); got != time.Second {
		t.Errorf("runTime(true) = %v", got)
	}
	if n, j, ok := splitAssignKey("/lockstep/v1/assign/vn-00001/lt-x-1"); !ok || n != "vn-00001" || j != "lt-x-1" {
		t.Errorf("splitAssignKey = %q %q %v", n, j, ok)
	}
	jobs := []trace.Job{{Nodes: 1, GPUsPerNode: 8}, {Nodes: 4, GPUsPerNode: 8}, {Nodes: 4, GPUsPerNode: 8}, {Nodes: 2, GPUsPerNode: 8}}
	if s := commonShape(jobs); s.String() != "4x8" {
		t.Errorf("commonShape = %s, want 4x8", s)
	}
}

// The load test runs against a cluster with auth (the embedded one, as
// `lockstep dev` runs by default): the harness connects as admin over
// etcd TLS, submits as the user alice on her own subject, and every job is
// admitted and runs.
func TestLiveRunWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c, jobs := workload(t, fabric.Generated{Nodes: 16, LeavesPerSpine: 2}, "1x8:1,2x8:1", "100ms:1",
		trace.Synthetic{Rate: 20, Span: 500 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{
		DataDir: t.TempDir(), NoFsync: true, Auth: true, Cluster: c, Jobs: jobs, NodesPerLease: 8,
		RawTxns: 20, Drain: 30 * time.Second, Deadline: 45 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.BookkeepingOK() {
		t.Fatalf("bookkeeping: %v", res.Bookkeeping)
	}
	if res.Submitted != len(jobs) || res.Admitted != len(jobs) || res.Succeeded != len(jobs) {
		t.Errorf("submitted %d, admitted %d, succeeded %d of %d", res.Submitted, res.Admitted, res.Succeeded, len(jobs))
	}
	if res.SubmittedAs != devUser || res.SubmitSubject != subjects.SubmitAs(devUser) {
		t.Errorf("submitted as %q on %q, want %s on its own subject", res.SubmittedAs, res.SubmitSubject, devUser)
	}
	if !strings.Contains(res.Auth, "NATS creds") || !strings.Contains(res.Auth, "etcd TLS") {
		t.Errorf("auth %q, want NATS creds and etcd TLS", res.Auth)
	}
	if res.RawPerSec <= 0 || res.ToRunning.N != len(jobs) {
		t.Errorf("raw %g Txn/s, %d running latencies", res.RawPerSec, res.ToRunning.N)
	}
}
