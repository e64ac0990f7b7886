package store_test

import (
	"context"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A gang holding node a whole and one GPU of node b writes one claim key
// for a and one for b's GPU; the launch barrier detaches both from the
// reservation lease, so they outlive it; the release deletes both. A
// reservation of a GPU of a, or of b whole, meanwhile fails and reads
// what held it.
func TestWholeNodeClaimsLiveAndDieWithTheAllocation(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	revs := registered(t, env.Etcd, "a", "b") // 2 GPUs each
	a := domain.Allocation{JobID: "j", Attempt: 1, State: domain.AllocReserved, WholeNodes: []string{"a"},
		Placement: domain.Placement{MasterAddr: "a", MasterPort: 29500, Nodes: []domain.NodePlacement{
			{Node: "a", NodeRank: 0, GPUs: []int{0, 1}}, {Node: "b", NodeRank: 1, GPUs: []int{1}}}}}
	want := []string{store.WholeNodeClaimKey("a"), store.ClaimKey("b", 1)}
	if got := store.ClaimKeys(a); !slices.Equal(got, want) {
		t.Fatalf("ClaimKeys = %v, want %v", got, want)
	}
	lease, err := env.Etcd.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	assigns := []domain.Assignment{{JobID: "j", Attempt: 1, Node: "a"}, {JobID: "j", Attempt: 1, Node: "b", NodeRank: 1}}
	if ok, _, err := store.Reserve(ctx, env.Etcd, a, assigns, revs, lease.ID); err != nil || !ok {
		t.Fatalf("reserve: ok %v, err %v", ok, err)
	}
	if got := keysUnder(t, env.Etcd, store.ClaimsPrefix); !slices.Equal(got, want) {
		t.Fatalf("claims after reserve: %v, want %v", got, want)
	}

	for name, other := range map[string]domain.Allocation{
		"one GPU of the node held whole": {JobID: "k", Attempt: 1, State: domain.AllocReserved,
			Placement: domain.Placement{MasterAddr: "a", MasterPort: 29501, Nodes: []domain.NodePlacement{{Node: "a", GPUs: []int{1}}}}},
		"whole, a node with one GPU held": {JobID: "k", Attempt: 1, State: domain.AllocReserved, WholeNodes: []string{"b"},
			Placement: domain.Placement{MasterAddr: "b", MasterPort: 29501, Nodes: []domain.NodePlacement{{Node: "b", GPUs: []int{0, 1}}}}},
	} {
		ok, resp, err := store.Reserve(ctx, env.Etcd, other, nil, revs, lease.ID)
		if err != nil || ok {
			t.Fatalf("%s: reserved (ok %v, err %v), want a conflict", name, ok, err)
		}
		var read []string
		for _, r := range resp.Responses {
			for _, kv := range r.GetResponseRange().Kvs {
				read = append(read, string(kv.Key))
			}
		}
		if !slices.ContainsFunc(read, func(k string) bool { return slices.Contains(want, k) }) {
			t.Errorf("%s: the refusal read %v, none of the claims that held it", name, read)
		}
	}

	a.State = domain.AllocRunning
	_, rev, _, err := store.GetAllocation(ctx, env.Etcd, "j")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(store.AllocKey("j")), "=", rev)).
		Then(store.AllocationDetach(a)...).Commit(); err != nil {
		t.Fatalf("detach: %v", err)
	}
	if _, err := env.Etcd.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	if got := keysUnder(t, env.Etcd, store.ClaimsPrefix); !slices.Equal(got, want) {
		t.Fatalf("claims after the lease ended: %v, want %v (detached)", got, want)
	}

	_, rev, _, err = store.GetAllocation(ctx, env.Etcd, "j")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := store.Release(ctx, env.Etcd, a, rev); err != nil || !ok {
		t.Fatalf("release: ok %v, err %v", ok, err)
	}
	if got := keysUnder(t, env.Etcd, store.ClaimsPrefix); len(got) != 0 {
		t.Fatalf("claims after release: %v", got)
	}
}

// The whole-node claim key parses as the node's WholeNode index; a GPU
// index can never be read as one.
func TestParseClaimKeyTellsWholeNodes(t *testing.T) {
	for key, want := range map[string]struct {
		node string
		gpu  int
		ok   bool
	}{
		store.WholeNodeClaimKey("n1"):  {"n1", store.WholeNode, true},
		store.ClaimKey("n1", 7):        {"n1", 7, true},
		store.ClaimsPrefix + "n1/-1":   {},
		store.ClaimsPrefix + "/all":    {},
		store.ClaimsPrefix + "a/b/all": {},
		store.ClaimsPrefix + "n1/alls": {},
	} {
		node, gpu, ok := store.ParseClaimKey(key)
		if node != want.node || gpu != want.gpu || ok != want.ok {
			t.Errorf("ParseClaimKey(%q) = %q, %d, %v; want %q, %d, %v", key, node, gpu, ok, want.node, want.gpu, want.ok)
		}
	}
}

func keysUnder(t *testing.T, kv clientv3.KV, prefix string) []string {
	t.Helper()
	resp, err := kv.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys
}
