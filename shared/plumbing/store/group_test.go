package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"pgregory.net/rapid"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// result is what one transaction's Commit returned.
type result struct {
	Resp *clientv3.TxnResponse
	Err  error
}

// fataler is what queued needs of a test: testing.T and rapid.T both.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// queued starts a GroupKV whose committer starts only once every one of
// txns waits in its queue, so the groups it forms do not depend on timing.
// It returns each transaction's answer, in the order given, once all are
// answered; the GroupKV ends with ctx.
func queued(t fataler, ctx context.Context, kv clientv3.KV, txns []func(clientv3.Txn) clientv3.Txn) (*store.GroupKV, []result) {
	t.Helper()
	g, inQueue, start := store.StoppedGroupKV(ctx, kv)
	out := make([]result, len(txns))
	var wg sync.WaitGroup
	for i, build := range txns {
		// One at a time into the queue, so its order is the order given.
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := build(g.Txn(context.Background())).Commit()
			out[i] = result{resp, err}
		}()
		waitQueued(t, inQueue, i+1)
	}
	start()
	wg.Wait()
	return g, out
}

func waitQueued(t fataler, inQueue func() int, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); inQueue() < n; {
		if time.Now().After(deadline) {
			t.Fatal("transaction never queued")
		}
		time.Sleep(time.Millisecond)
	}
}

// Independent transactions waiting together go to etcd as one, and each
// gets its own Then's responses.
func TestGroupCommitsIndependentTransactionsAsOne(t *testing.T) {
	env := testenv.Start(t)
	kv := namespace.NewKV(env.Etcd.KV, "/group-one")
	ctx := context.Background()
	var txns []func(clientv3.Txn) clientv3.Txn
	for i := range 10 {
		k := fmt.Sprintf("k%d", i)
		txns = append(txns, func(t clientv3.Txn) clientv3.Txn {
			return t.If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
				Then(clientv3.OpPut(k, "v"+k), clientv3.OpGet(k))
		})
	}
	g, out := queued(t, t.Context(), kv, txns)
	if asked, sent, split := g.Stats(); asked != 10 || sent != 1 || split != 0 {
		t.Fatalf("asked %d, sent %d, split %d; want 10 in one transaction", asked, sent, split)
	}
	var rev int64
	for i, r := range out {
		if r.Err != nil || !r.Resp.Succeeded {
			t.Fatalf("txn %d: %+v, %v", i, r.Resp, r.Err)
		}
		if len(r.Resp.Responses) != 2 {
			t.Fatalf("txn %d got %d responses, want its own 2", i, len(r.Resp.Responses))
		}
		kvs := r.Resp.Responses[1].GetResponseRange().Kvs
		if k := fmt.Sprintf("k%d", i); len(kvs) != 1 || string(kvs[0].Key) != k || string(kvs[0].Value) != "v"+k {
			t.Errorf("txn %d read %v, want its own key", i, kvs)
		}
		if i > 0 && r.Resp.Header.Revision != rev {
			t.Errorf("txn %d at revision %d, the group's is %d", i, r.Resp.Header.Revision, rev)
		}
		rev = r.Resp.Header.Revision
	}
	if resp, err := kv.Get(ctx, "k", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 10 {
		t.Errorf("%v keys written, want 10 (%v)", resp, err)
	}
}

// In a group each member gets its own answer: one refused by its compare
// gets its Else reads, and the others commit, all in one etcd
// transaction. A group etcd refuses whole (a member's lease is gone) is
// committed member by member, and only that member fails.
func TestGroupMembersGetTheirOwnAnswers(t *testing.T) {
	env := testenv.Start(t)
	kv := namespace.NewKV(env.Etcd.KV, "/group-answers")
	ctx := context.Background()
	if _, err := kv.Put(ctx, "taken", "someone"); err != nil {
		t.Fatal(err)
	}
	free := func(k string) func(clientv3.Txn) clientv3.Txn {
		return func(t clientv3.Txn) clientv3.Txn {
			return t.If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).Then(clientv3.OpPut(k, "me")).Else(clientv3.OpGet(k))
		}
	}
	g, out := queued(t, t.Context(), kv, []func(clientv3.Txn) clientv3.Txn{free("a"), free("taken"), free("b")})
	if _, sent, split := g.Stats(); sent != 1 || split != 0 {
		t.Errorf("sent %d, split %d; want one transaction for the three", sent, split)
	}
	if out[0].Err != nil || !out[0].Resp.Succeeded || out[2].Err != nil || !out[2].Resp.Succeeded {
		t.Errorf("the free keys were not taken: %+v, %+v", out[0], out[2])
	}
	if r := out[1]; r.Err != nil || r.Resp.Succeeded || len(r.Resp.Responses) != 1 ||
		string(r.Resp.Responses[0].GetResponseRange().Kvs[0].Value) != "someone" {
		t.Errorf("the taken key: %+v, %v; want refused with its Else read", r.Resp, r.Err)
	}

	gone, err := env.Etcd.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Etcd.Revoke(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	onLease := func(k string, lease clientv3.LeaseID) func(clientv3.Txn) clientv3.Txn {
		return func(t clientv3.Txn) clientv3.Txn { return t.Then(clientv3.OpPut(k, "v", clientv3.WithLease(lease))) }
	}
	g, out = queued(t, t.Context(), kv, []func(clientv3.Txn) clientv3.Txn{onLease("c", clientv3.NoLease), onLease("d", gone.ID), onLease("e", clientv3.NoLease)})
	if _, sent, split := g.Stats(); sent != 4 || split != 1 {
		t.Errorf("sent %d, split %d; want the group refused, then each member alone", sent, split)
	}
	if out[0].Err != nil || out[2].Err != nil || !errors.Is(out[1].Err, rpctypes.ErrLeaseNotFound) {
		t.Errorf("errors %v, %v, %v; want only the revoked lease's put to fail, on its lease", out[0].Err, out[1].Err, out[2].Err)
	}
}

// A transaction is never stranded in the queue: when the GroupKV stops
// before a committer took it, its caller commits it alone; when its caller
// gives up first, no committer sends it afterwards.
func TestGroupQueueIsNeverStranded(t *testing.T) {
	env := testenv.Start(t)
	kv := namespace.NewKV(env.Etcd.KV, "/group-stranded")
	ctx := context.Background()

	gctx, stop := context.WithCancel(ctx)
	g, inQueue, _ := store.StoppedGroupKV(gctx, kv)
	done := make(chan result, 1)
	go func() {
		resp, err := g.Txn(ctx).Then(clientv3.OpPut("stopped", "v")).Commit()
		done <- result{resp, err}
	}()
	waitQueued(t, inQueue, 1)
	stop()
	if r := <-done; r.Err != nil || !r.Resp.Succeeded {
		t.Fatalf("queued when the GroupKV stopped: %+v, %v; want committed alone", r.Resp, r.Err)
	}

	g, inQueue, start := store.StoppedGroupKV(t.Context(), kv)
	callerCtx, giveUp := context.WithCancel(ctx)
	go func() {
		resp, err := g.Txn(callerCtx).Then(clientv3.OpPut("abandoned", "v")).Commit()
		done <- result{resp, err}
	}()
	waitQueued(t, inQueue, 1)
	giveUp()
	if r := <-done; !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("given up on while queued: %v, want the caller's cancellation", r.Err)
	}
	start()
	// A transaction queued behind it shows the committer has been past it.
	if resp, err := g.Txn(ctx).Then(clientv3.OpPut("after", "v")).Commit(); err != nil || !resp.Succeeded {
		t.Fatalf("next transaction: %v", err)
	}
	for key, want := range map[string]int64{"stopped": 1, "abandoned": 0, "after": 1} {
		if resp, err := kv.Get(ctx, key, clientv3.WithCountOnly()); err != nil || resp.Count != want {
			t.Errorf("%s: %d keys, want %d (%v)", key, resp.Count, want, err)
		}
	}
}

// However transactions are grouped, what each one gets and what etcd ends
// up holding is what some order of committing them one by one gives.
func TestGroupCommitIsSerializable(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	keys := []string{"a/1", "a/2", "b/1", "b/2", "c"}
	prefixes := []string{"a/", "b/"}
	iteration, grouped := 0, 0
	defer func() {
		if grouped == 0 {
			t.Error("no run formed a group: the test checked nothing")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		iteration++
		initial := map[string]string{}
		for _, k := range keys {
			if rapid.Bool().Draw(rt, "present "+k) {
				initial[k] = rapid.SampledFrom([]string{"x", "y"}).Draw(rt, "value "+k)
			}
		}
		type step struct {
			cmps      []clientv3.Cmp
			then, els []clientv3.Op
		}
		n := rapid.IntRange(2, 4).Draw(rt, "txns")
		steps := make([]step, n)
		for i := range steps {
			for range rapid.IntRange(0, 2).Draw(rt, "cmps") {
				switch rapid.IntRange(0, 2).Draw(rt, "cmp") {
				case 0:
					k := rapid.SampledFrom(keys).Draw(rt, "cmp key")
					steps[i].cmps = append(steps[i].cmps, clientv3.Compare(clientv3.Value(k), "=", rapid.SampledFrom([]string{"x", "y"}).Draw(rt, "cmp value")))
				case 1:
					steps[i].cmps = append(steps[i].cmps, clientv3.Compare(clientv3.CreateRevision(rapid.SampledFrom(keys).Draw(rt, "absent")), "=", 0))
				default:
					steps[i].cmps = append(steps[i].cmps, clientv3.Compare(clientv3.CreateRevision(rapid.SampledFrom(prefixes).Draw(rt, "absent prefix")), "=", 0).WithPrefix())
				}
			}
			// ops draws a branch's ops; etcd refuses a key written twice in
			// one branch.
			ops := func(label string) []clientv3.Op {
				var out []clientv3.Op
				used := map[string]bool{}
				for range rapid.IntRange(0, 3).Draw(rt, label) {
					k := rapid.SampledFrom(keys).Draw(rt, "op key")
					switch rapid.IntRange(0, 4).Draw(rt, "op") {
					case 0:
						if !used[k] {
							used[k] = true
							out = append(out, clientv3.OpPut(k, fmt.Sprintf("t%d", i)))
						}
					case 1:
						if !used[k] {
							used[k] = true
							out = append(out, clientv3.OpDelete(k))
						}
					case 2:
						if pre := rapid.SampledFrom(prefixes).Draw(rt, "delete prefix"); !used[pre] {
							// A prefix delete writes every key under it: no
							// other write there in this branch.
							clash := false
							for u := range used {
								clash = clash || strings.HasPrefix(u, pre)
							}
							if !clash {
								used[pre] = true
								for _, key := range keys {
									if strings.HasPrefix(key, pre) {
										used[key] = true
									}
								}
								out = append(out, clientv3.OpDelete(pre, clientv3.WithPrefix()))
							}
						}
					case 3:
						out = append(out, clientv3.OpGet(k))
					default:
						out = append(out, clientv3.OpGet(rapid.SampledFrom(prefixes).Draw(rt, "get prefix"), clientv3.WithPrefix()))
					}
				}
				return out
			}
			steps[i].then, steps[i].els = ops("then ops"), ops("else ops")
		}

		// outcome is what one run gave: each transaction's success and
		// reads, then every key's value.
		type outcome string
		space := 0
		fresh := func() clientv3.KV {
			space++
			kv := namespace.NewKV(env.Etcd.KV, fmt.Sprintf("/serial/%d/%d/", iteration, space))
			for k, v := range initial {
				if _, err := kv.Put(ctx, k, v); err != nil {
					rt.Fatal(err)
				}
			}
			return kv
		}
		describe := func(kv clientv3.KV, rs []*clientv3.TxnResponse) outcome {
			s := ""
			for _, r := range rs {
				s += fmt.Sprintf("%v[", r.Succeeded)
				for _, op := range r.Responses {
					for _, kv := range op.GetResponseRange().GetKvs() {
						s += string(kv.Key) + "=" + string(kv.Value) + " "
					}
				}
				s += "] "
			}
			all, err := kv.Get(ctx, "", clientv3.WithFromKey())
			if err != nil {
				rt.Fatal(err)
			}
			for _, kv := range all.Kvs {
				s += string(kv.Key) + "=" + string(kv.Value) + " "
			}
			return outcome(s)
		}

		var serial []outcome
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		for perm := range permutations(order) {
			kv := fresh()
			rs := make([]*clientv3.TxnResponse, n)
			for _, i := range perm {
				r, err := kv.Txn(ctx).If(steps[i].cmps...).Then(steps[i].then...).Else(steps[i].els...).Commit()
				if err != nil {
					rt.Fatal(err)
				}
				rs[i] = r
			}
			serial = append(serial, describe(kv, rs))
		}

		kv := fresh()
		var txns []func(clientv3.Txn) clientv3.Txn
		for _, s := range steps {
			txns = append(txns, func(t clientv3.Txn) clientv3.Txn { return t.If(s.cmps...).Then(s.then...).Else(s.els...) })
		}
		gctx, cancel := context.WithCancel(ctx)
		defer cancel()
		g, out := queued(rt, gctx, kv, txns)
		if asked, sent, _ := g.Stats(); sent < asked {
			grouped++
		}
		rs := make([]*clientv3.TxnResponse, n)
		for i, r := range out {
			if r.Err != nil {
				rt.Fatal(r.Err)
			}
			rs[i] = r.Resp
		}
		if got := describe(kv, rs); !slices.Contains(serial, got) {
			rt.Fatalf("grouped:\n  %s\nis no serial order's:\n  %v", got, serial)
		}
	})
}

// permutations yields every order of s.
func permutations(s []int) func(func([]int) bool) {
	return func(yield func([]int) bool) {
		var rec func(k int) bool
		rec = func(k int) bool {
			if k == len(s) {
				return yield(slices.Clone(s))
			}
			for i := k; i < len(s); i++ {
				s[k], s[i] = s[i], s[k]
				if !rec(k + 1) {
					return false
				}
				s[k], s[i] = s[i], s[k]
			}
			return true
		}
		rec(0)
	}
}
