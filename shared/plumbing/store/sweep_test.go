package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func owned(key, job string, attempt int) store.Owned {
	return store.Owned{StoredKey: store.StoredKey{Key: key, ModRev: 1}, Job: job, Attempt: attempt}
}

// SweepTargets picks a job's keys of the attempts that are over,
// assignments first.
func TestSweepTargets(t *testing.T) {
	keys := []store.Owned{
		owned(store.ClaimKey("n0", 0), "j", 1),
		owned(store.ClaimKey("n0", 1), "j", 2),
		owned(store.ClaimKey("n1", 0), "k", 1),
		owned(store.PortKey("n0", 29500), "j", 1),
		owned(store.AssignKey("n0", "j"), "", 0), // undecodable: picked by its key
		owned(store.AssignKey("n0", "k"), "", 0),
		owned(store.AllocKey("j"), "", 0), // malformed record
	}
	cases := []struct {
		name    string
		attempt int
		want    []string
	}{
		// Assignments first, so a sweep spanning transactions stops the
		// ranks before it frees their GPUs; the rest in the order read.
		{"attempt 1 and older", 1, []string{store.AssignKey("n0", "j"), store.ClaimKey("n0", 0), store.PortKey("n0", 29500), store.AllocKey("j")}},
		{"every attempt", -1, []string{store.AssignKey("n0", "j"), store.ClaimKey("n0", 0), store.ClaimKey("n0", 1), store.PortKey("n0", 29500), store.AllocKey("j")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, k := range store.SweepTargets("j", c.attempt, keys) {
				got = append(got, k.Key)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("SweepTargets = %v, want %v", got, c.want)
			}
		})
	}
}

// CheckAllocation names the field of a record that cannot be used.
func TestCheckAllocation(t *testing.T) {
	good := func() domain.Allocation {
		return domain.Allocation{JobID: "j", Attempt: 1, State: domain.AllocRunning, Placement: domain.Placement{
			MasterAddr: "n0", MasterPort: 29500, Nodes: []domain.NodePlacement{{Node: "n0", GPUs: []int{0, 1}}, {Node: "n1", GPUs: []int{0}}}}}
	}
	cases := []struct {
		name  string
		spoil func(*domain.Allocation)
		field string
	}{
		{"good", func(*domain.Allocation) {}, ""},
		{"another job", func(a *domain.Allocation) { a.JobID = "k" }, "jobId"},
		{"attempt 0", func(a *domain.Allocation) { a.Attempt = 0 }, "attempt"},
		{"unknown state", func(a *domain.Allocation) { a.State = "zombie" }, "state"},
		{"no nodes", func(a *domain.Allocation) { a.Placement.Nodes = nil }, "placement.nodes"},
		{"no master", func(a *domain.Allocation) { a.Placement.MasterAddr = "" }, "placement.masterAddr"},
		{"bad port", func(a *domain.Allocation) { a.Placement.MasterPort = 70000 }, "placement.masterPort"},
		{"node twice", func(a *domain.Allocation) { a.Placement.Nodes[1].Node = "n0" }, "placement.nodes[1].node"},
		{"GPU twice", func(a *domain.Allocation) { a.Placement.Nodes[0].GPUs = []int{1, 1} }, "placement.nodes[0].gpus"},
		{"negative GPU", func(a *domain.Allocation) { a.Placement.Nodes[1].GPUs = []int{-3} }, "placement.nodes[1].gpus"},
		{"a whole node", func(a *domain.Allocation) { a.WholeNodes = []string{"n1"} }, ""},
		{"a whole node not placed", func(a *domain.Allocation) { a.WholeNodes = []string{"n1", "n7"} }, "wholeNodes[1]"},
		{"a whole node twice", func(a *domain.Allocation) { a.WholeNodes = []string{"n0", "n0"} }, "wholeNodes[1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := good()
			c.spoil(&a)
			err := store.CheckAllocation(store.AllocKey("j"), a)
			switch {
			case c.field == "" && err != nil:
				t.Errorf("CheckAllocation = %v, want nil", err)
			case c.field != "" && (!store.IsMalformed(err) || !strings.Contains(err.Error(), store.AllocKey("j")+": "+c.field+":")):
				t.Errorf("CheckAllocation = %v, want a malformed error naming %s", err, c.field)
			}
		})
	}
}

// ReleaseJob of a corrupt record deletes it and the job's keys of the
// attempt (found by their values), leaves another job's and a later
// attempt's keys alone, and does not fail; ReleaseAttempt does the same
// when the record is gone.
func TestReleaseWithoutAUsableRecord(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	put := func(a domain.Allocation) {
		t.Helper()
		var assigns []domain.Assignment
		for _, np := range a.Placement.Nodes {
			assigns = append(assigns, domain.Assignment{JobID: a.JobID, Attempt: a.Attempt, Node: np.Node})
		}
		if _, err := env.Etcd.Txn(ctx).Then(store.AllocationPuts(a, assigns)...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	alloc := func(job string, attempt, port int, nodes ...string) domain.Allocation {
		a := domain.Allocation{JobID: job, Attempt: attempt, State: domain.AllocRunning, Placement: domain.Placement{MasterAddr: nodes[0], MasterPort: port}}
		for _, n := range nodes {
			a.Placement.Nodes = append(a.Placement.Nodes, domain.NodePlacement{Node: n, GPUs: []int{attempt}})
		}
		return a
	}
	count := func(job string) int {
		t.Helper()
		n := 0
		for _, p := range []string{store.ClaimsPrefix, store.PortsPrefix, store.AssignPrefix, store.AllocPrefix} {
			resp, err := env.Etcd.Get(ctx, p, clientv3.WithPrefix())
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range resp.Kvs {
				if strings.Contains(string(kv.Value), `"jobId":"`+job+`"`) || strings.HasSuffix(string(kv.Key), "/"+job) {
					n++
				}
			}
		}
		return n
	}
	put(alloc("j", 1, 29500, "n0", "n1"))
	put(alloc("bystander", 1, 29501, "n2"))
	if _, err := env.Etcd.Put(ctx, store.AllocKey("j"), "{"); err != nil {
		t.Fatal(err)
	}
	r, err := store.ReleaseJob(ctx, env.Etcd, "j", 1)
	if err != nil || !store.IsMalformed(r.Malformed) || r.Swept != 6 {
		t.Fatalf("ReleaseJob of a corrupt record = %+v, %v; want it named and 6 keys swept", r, err)
	}
	if n := count("j"); n != 0 {
		t.Errorf("%d keys of j left", n)
	}
	if n := count("bystander"); n != 4 {
		t.Errorf("%d keys of the bystander left, want its 4", n)
	}

	// The record deleted by hand: a release finds nothing, an attempt's
	// release sweeps.
	put(alloc("gone", 1, 29502, "n3"))
	if _, err := env.Etcd.Delete(ctx, store.AllocKey("gone")); err != nil {
		t.Fatal(err)
	}
	if r, err := store.ReleaseJob(ctx, env.Etcd, "gone", 1); err != nil || r.Swept != 0 || count("gone") != 3 {
		t.Fatalf("ReleaseJob without a record = %+v, %v, %d keys left; want nothing done", r, err, count("gone"))
	}
	if r, err := store.ReleaseAttempt(ctx, env.Etcd, "gone", 1); err != nil || r.Swept != 3 || count("gone") != 0 {
		t.Fatalf("ReleaseAttempt without a record = %+v, %v, %d keys left; want 3 swept", r, err, count("gone"))
	}
}
