package invariants_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/invariants"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// cluster is a consistent state written to a real etcd and jobs KV: job
// "run" running attempt 1 on n1 (GPUs 0,1, durable claims), job "res"
// reserved attempt 1 on n2 (GPU 0, under a reservation lease). Both nodes
// are registered under their own leases (epochs).
type cluster struct {
	env      *testenv.Env
	js       *jobs.Store
	epoch    map[string]int64
	resLease clientv3.LeaseID
}

func seed(t *testing.T) *cluster {
	t.Helper()
	ctx := context.Background()
	env := testenv.Start(t)
	js := env.Jobs(t)
	c := &cluster{env: env, js: js, epoch: map[string]int64{}}
	for _, n := range []string{"n1", "n2"} {
		l := env.Lease(t, time.Minute)
		c.epoch[n] = int64(l)
		c.put(t, store.NodeKey(n), domain.Node{Name: n, Addr: n, GPUs: 4, Epoch: int64(l)}, l)
		c.put(t, store.InventoryKey(n), domain.Node{Name: n, Addr: n, GPUs: 4}, 0)
	}
	c.resLease = env.Lease(t, time.Minute)
	c.allocate(t, "run", 1, domain.AllocRunning, "n1", []int{0, 1}, 0)
	c.allocate(t, "res", 1, domain.AllocReserved, "n2", []int{0}, c.resLease)
	for _, j := range []domain.Job{
		{ID: "run", State: domain.StateRunning, Attempt: 1, Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 2}}},
		{ID: "res", State: domain.StateReserved, Attempt: 1, Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1}}},
	} {
		if err := js.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// allocate writes an allocation with its claims, port and assignment, as
// gang does, and the running key its node's agent writes when it starts
// the ranks.
func (c *cluster) allocate(t *testing.T, job string, attempt int, st domain.AllocState, node string, gpus []int, lease clientv3.LeaseID) {
	t.Helper()
	a := domain.Allocation{JobID: job, Attempt: attempt, State: st, Lease: int64(lease),
		Placement: domain.Placement{MasterAddr: node, MasterPort: 29500,
			Nodes: []domain.NodePlacement{{Node: node, GPUs: gpus, Ranks: []domain.Rank{{GPUs: gpus}}}}}}
	c.put(t, store.AllocKey(job), a, lease)
	for _, g := range gpus {
		c.put(t, store.ClaimKey(node, g), domain.Claim{JobID: job, Attempt: attempt}, lease)
	}
	c.put(t, store.PortKey(node, 29500), domain.Claim{JobID: job, Attempt: attempt}, lease)
	c.put(t, store.AssignKey(node, job), domain.Assignment{JobID: job, Attempt: attempt, Node: node, Epoch: c.epoch[node]}, lease)
	c.put(t, store.FootprintKey(job), store.Footprint{JobID: job, Attempt: attempt, Nodes: []string{node}}, 0)
	c.put(t, store.RunningKey(node, job), store.Running{JobID: job, Node: node, Attempt: attempt, Epoch: c.epoch[node]}, clientv3.LeaseID(c.epoch[node]))
}

func (c *cluster) put(t *testing.T, key string, v any, lease clientv3.LeaseID) {
	t.Helper()
	val, ok := v.(string)
	if !ok {
		val = store.MustJSON(v)
	}
	var opts []clientv3.OpOption
	if lease != 0 {
		opts = append(opts, clientv3.WithLease(lease))
	}
	if _, err := c.env.Etcd.Put(context.Background(), key, val, opts...); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) del(t *testing.T, key string) {
	t.Helper()
	if _, err := c.env.Etcd.Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

// findings runs the check as `lockstep check --settle 0` does and returns
// its findings as text.
func (c *cluster) findings(t *testing.T) []string {
	t.Helper()
	vs, err := invariants.Check(context.Background(), c.env.Etcd, c.js, 0)
	if err != nil {
		t.Fatalf("check aborted: %v", err)
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestCheckCleanCluster(t *testing.T) {
	c := seed(t)
	expect(t, c.findings(t))
}

// The finding: `alloc/<job>` of a running job deleted behind gang's back.
// The check names the job without allocation, the assignment left behind,
// the agent still running its ranks and the claims nobody owns.
func TestCheckDeletedAllocationOfRunningJob(t *testing.T) {
	c := seed(t)
	c.del(t, store.AllocKey("run"))
	expect(t, c.findings(t),
		"active-job-without-allocation: run is running on attempt 1 but holds no allocation for it (alloc/run: none)",
		"assignment-without-allocation: assign/n1/run (attempt 1) has no allocation: alloc/run is gone",
		"claim-without-owner: n1/0 held by run has neither a live lease (lease 0) nor a running allocation",
		"claim-without-owner: n1/0 held by run, which has no allocation",
		"claim-without-owner: n1/1 held by run has neither a live lease (lease 0) nor a running allocation",
		"claim-without-owner: n1/1 held by run, which has no allocation",
		"ranks-without-allocation: running/n1/run: node n1 reports ranks of run attempt 1 alive: alloc/run is gone",
	)
}

// The finding: a corrupt `alloc/<job>` aborted the check. Now it is named,
// and judged as missing.
func TestCheckCorruptAllocation(t *testing.T) {
	c := seed(t)
	c.put(t, store.AllocKey("res"), `{"jobId": "res", "attempt": "one"`, c.resLease)
	var rest []string
	named := false
	for _, f := range c.findings(t) {
		if strings.HasPrefix(f, "malformed-value: alloc/res: undecodable: ") {
			named = true
			continue
		}
		rest = append(rest, f)
	}
	if !named {
		t.Error("alloc/res is not named as undecodable")
	}
	expect(t, rest,
		"active-job-without-allocation: res is reserved on attempt 1 but holds no allocation for it (alloc/res: none)",
		"assignment-without-allocation: assign/n2/res (attempt 1) has no allocation: alloc/res is gone",
		"claim-without-owner: n2/0 held by res, which has no allocation",
		"ranks-without-allocation: running/n2/res: node n2 reports ranks of res attempt 1 alive: alloc/res is gone",
	)
}

// Values that decode but contradict their key, or do not decode at all,
// are each named by key; the check still judges everything else.
func TestCheckMalformedValuesNamedByKey(t *testing.T) {
	c := seed(t)
	c.put(t, store.AllocKey("run"), domain.Allocation{JobID: "other", Attempt: 1, State: domain.AllocRunning,
		Placement: domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1", GPUs: []int{0, 1}}}}}, 0)
	c.put(t, store.ClaimKey("n2", 3), "\x00garbage", 0)
	c.put(t, store.InventoryKey("n2"), `{"name": "n9"}`, 0)
	c.put(t, store.AssignKey("n1", "run"), `[]`, 0)
	c.put(t, store.RunningKey("n1", "run"), store.Running{JobID: "run", Node: "n2", Attempt: 1}, 0)
	c.put(t, store.FootprintKey("res"), store.Footprint{JobID: "run", Attempt: 1, Nodes: []string{"n2"}}, 0)
	kv, err := c.env.Bus.JS.KeyValue(context.Background(), subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "bad", []byte(`{"id":"bad","state":"exploded"}`)); err != nil {
		t.Fatal(err)
	}
	var malformed []string
	for _, f := range c.findings(t) {
		if key, ok := strings.CutPrefix(f, "malformed-value: "); ok {
			malformed = append(malformed, key[:strings.Index(key, ":")])
		}
	}
	expect(t, malformed, "alloc/run", "assign/n1/run", "claims/n2/3", "footprints/res", "inventory/n2", "jobs/bad", "running/n1/run")
}

// Attempt 1's assignment and running key left behind after the job moved
// on to attempt 2 elsewhere: the agent of n1 reports attempt 1's ranks
// alive beside attempt 2 — the reservation that had to wait for them did
// not. Once n1 reports them gone, only the assignment is named.
func TestCheckRanksOfAnEarlierAttempt(t *testing.T) {
	c := seed(t)
	c.del(t, store.AllocKey("run"))
	c.del(t, store.ClaimKey("n1", 0))
	c.del(t, store.ClaimKey("n1", 1))
	c.del(t, store.PortKey("n1", 29500))
	c.allocate(t, "run", 2, domain.AllocRunning, "n2", []int{1, 2}, 0)
	c.put(t, store.AssignKey("n1", "run"), domain.Assignment{JobID: "run", Attempt: 1, Node: "n1", Epoch: c.epoch["n1"]}, 0)
	if _, _, err := c.js.Update(context.Background(), "run", func(j *domain.Job) (bool, error) { j.Attempt = 2; return true, nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"assignment-without-allocation: assign/n1/run (attempt 1) has no allocation: alloc/run is of attempt 2",
		"ranks-beside-next-attempt: running/n1/run: node n1 reports ranks of run attempt 1 alive while attempt 2 holds an allocation",
		"ranks-outside-footprint: running/n1/run: node n1 reports ranks of run attempt 1 alive, but footprints/run does not name it",
	}
	expect(t, c.findings(t), want...)

	c.del(t, store.RunningKey("n1", "run"))
	expect(t, c.findings(t), want[0])
}

// A gang holding a node whole has one claim key there (claims/<node>/all),
// written as gang writes it: the check counts it on every GPU the node's
// inventory gives it, and names a GPU claim beside it.
func TestCheckWholeNodeClaims(t *testing.T) {
	c := seed(t)
	ctx := context.Background()
	c.put(t, store.InventoryKey("n3"), domain.Node{Name: "n3", Addr: "n3", GPUs: 4}, 0)
	a := domain.Allocation{JobID: "big", Attempt: 1, State: domain.AllocRunning, WholeNodes: []string{"n3"},
		Placement: domain.Placement{MasterAddr: "n3", MasterPort: 29501,
			Nodes: []domain.NodePlacement{{Node: "n3", GPUs: []int{0, 1, 2, 3}}}}}
	if _, err := c.env.Etcd.Txn(ctx).Then(store.AllocationPuts(a, nil)...).Commit(); err != nil {
		t.Fatal(err)
	}
	if err := c.js.Create(ctx, domain.Job{ID: "big", State: domain.StateRunning, Attempt: 1,
		Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 4}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, c.findings(t))

	c.put(t, store.ClaimKey("n3", 2), domain.Claim{JobID: "res", Attempt: 1}, c.resLease)
	// Twice wrong: beside the whole node's claim, and outside res's own
	// allocation (which places n2).
	expect(t, c.findings(t),
		"claim-outside-allocation: n3/2 held by res, whose allocation does not place it",
		"gpu-claimed-twice: n3/2 is claimed by res and, with the whole node, by big")
}
