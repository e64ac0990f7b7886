package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"pgregory.net/rapid"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// TestReservationIsAllOrNothing drives random reserve/release sequences
// against real etcd through the production transactions and checks them
// against a model: a reservation commits exactly when every slot it asks for
// is free; then it holds all of them; a release frees exactly its own.
func TestReservationIsAllOrNothing(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	nodes := []string{"a", "b", "c"}
	const gpus = 4
	iteration := 0

	rapid.Check(t, func(rt *rapid.T) {
		iteration++
		kv := namespace.NewKV(env.Etcd.KV, fmt.Sprintf("/prop/%d", iteration))
		lease, err := env.Etcd.Grant(ctx, 60)
		if err != nil {
			rt.Fatal(err)
		}
		revs := map[string]int64{}
		for _, n := range nodes {
			resp, err := kv.Put(ctx, store.NodeKey(n), store.MustJSON(domain.Node{Name: n, GPUs: gpus}))
			if err != nil {
				rt.Fatal(err)
			}
			revs[n] = resp.Header.Revision
		}
		model := map[string]string{} // "node/gpu" -> job
		held := map[string]domain.Allocation{}
		ports := map[int]string{}

		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for i := range steps {
			job := fmt.Sprintf("j%d", rapid.IntRange(0, 5).Draw(rt, "job"))
			if a, ok := held[job]; ok && rapid.Bool().Draw(rt, "release") {
				_, rev, found, err := store.GetAllocation(ctx, kv, job)
				if err != nil || !found {
					rt.Fatalf("step %d: allocation of %s missing: %v", i, job, err)
				}
				ok, err := store.Release(ctx, kv, a, rev)
				if err != nil || !ok {
					rt.Fatalf("step %d: release of %s failed: %v %v", i, job, ok, err)
				}
				for k, j := range model {
					if j == job {
						delete(model, k)
					}
				}
				delete(ports, a.Placement.MasterPort)
				delete(held, job)
				continue
			}
			a := randomAllocation(rt, job, nodes, gpus)
			free := held[job].JobID == "" && ports[a.Placement.MasterPort] == ""
			for _, np := range a.Placement.Nodes {
				for _, g := range np.GPUs {
					if model[fmt.Sprintf("%s/%d", np.Node, g)] != "" {
						free = false
					}
				}
			}
			ok, _, err := store.Reserve(ctx, kv, a, nil, revs, lease.ID)
			if err != nil {
				rt.Fatal(err)
			}
			if ok != free {
				rt.Fatalf("step %d: reservation of %s committed=%v, but its slots free=%v", i, job, ok, free)
			}
			if ok {
				held[job] = a
				ports[a.Placement.MasterPort] = job
				for _, np := range a.Placement.Nodes {
					for _, g := range np.GPUs {
						model[fmt.Sprintf("%s/%d", np.Node, g)] = job
					}
				}
			}
			assertClaimsMatch(rt, kv, model)
		}
		_, _ = env.Etcd.Revoke(ctx, lease.ID)
	})
}

func randomAllocation(rt *rapid.T, job string, nodes []string, gpus int) domain.Allocation {
	chosen := rapid.SliceOfNDistinct(rapid.SampledFrom(nodes), 1, len(nodes), rapid.ID[string]).Draw(rt, "nodes")
	per := rapid.IntRange(1, gpus).Draw(rt, "gpusPerNode")
	p := domain.Placement{MasterAddr: "h", MasterPort: rapid.IntRange(1, 3).Draw(rt, "port")}
	var whole []string
	for i, n := range chosen {
		idx := rapid.SliceOfNDistinct(rapid.IntRange(0, gpus-1), per, per, rapid.ID[int]).Draw(rt, "gpus")
		p.Nodes = append(p.Nodes, domain.NodePlacement{Node: n, NodeRank: i, GPUs: idx})
		// A node taken whole is claimed by one key, as gang does, or (a
		// replica of before whole-node claims) one per GPU: the two
		// forms must exclude each other too.
		if per == gpus && rapid.Bool().Draw(rt, "whole") {
			whole = append(whole, n)
		}
	}
	return domain.Allocation{JobID: job, Attempt: 1, State: domain.AllocReserved, Placement: p, WholeNodes: whole}
}

// assertClaimsMatch checks etcd's claims equal the model exactly.
func assertClaimsMatch(rt *rapid.T, kv clientv3.KV, model map[string]string) {
	resp, err := kv.Get(context.Background(), store.ClaimsPrefix, clientv3.WithPrefix())
	if err != nil {
		rt.Fatal(err)
	}
	claimed := 0
	for _, kvp := range resp.Kvs {
		node, gpu, ok := store.ParseClaimKey(string(kvp.Key))
		if !ok {
			rt.Fatalf("bad claim key %s", kvp.Key)
		}
		var c domain.Claim
		if err := json.Unmarshal(kvp.Value, &c); err != nil {
			rt.Fatal(err)
		}
		held := []int{gpu}
		if gpu == store.WholeNode {
			held = []int{0, 1, 2, 3} // every GPU of the test's 4-GPU nodes
		}
		for _, g := range held {
			claimed++
			if want := model[fmt.Sprintf("%s/%d", node, g)]; c.JobID != want {
				rt.Fatalf("%s/%d claimed by %q (key %s), model says %q", node, g, c.JobID, kvp.Key, want)
			}
		}
	}
	if claimed != len(model) {
		rt.Fatalf("etcd's claims hold %d GPUs, model %d", claimed, len(model))
	}
}
