package store

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A group is formed only of transactions that neither write what another
// touches nor touch what another writes, on keys and ranges alike: the
// case that matters is a whole-node claim's prefix compare beside another
// gang's GPU claim on that node.
func TestGroupKeySetsOverlap(t *testing.T) {
	put := func(k string) clientv3.Op { return clientv3.OpPut(k, "v") }
	absent := func(k string) clientv3.Cmp { return clientv3.Compare(clientv3.CreateRevision(k), "=", 0) }
	set := func(cmps []clientv3.Cmp, ops ...clientv3.Op) keySet {
		ks, ok := keySetOf(cmps, ops, nil)
		if !ok {
			t.Fatal("not groupable")
		}
		return ks
	}
	wholeNode := set([]clientv3.Cmp{absent(NodeClaimsPrefix("n1")).WithPrefix()}, put(WholeNodeClaimKey("n1")))
	gpuOnN1 := set([]clientv3.Cmp{absent(ClaimKey("n1", 3))}, put(ClaimKey("n1", 3)))
	gpuOnN2 := set([]clientv3.Cmp{absent(ClaimKey("n2", 3))}, put(ClaimKey("n2", 3)))
	readsN2 := set(nil, clientv3.OpGet(ClaimKey("n2", 3)))
	readsAll := set(nil, clientv3.OpGet(ClaimsPrefix, clientv3.WithPrefix()))
	deletesN1 := set(nil, clientv3.OpDelete(NodeClaimsPrefix("n1"), clientv3.WithPrefix()))
	fromKey := set(nil, clientv3.OpGet(ClaimsPrefix, clientv3.WithFromKey()))
	alsoPutsN2 := set(nil, put(ClaimKey("n2", 3)))
	rangeDelete := set(nil, clientv3.OpDelete(ClaimKey("n2", 0), clientv3.WithRange(ClaimKey("n2", 5))))
	elseReadsN2, ok := keySetOf([]clientv3.Cmp{absent("x")}, []clientv3.Op{put("x")}, []clientv3.Op{clientv3.OpGet(ClaimKey("n2", 3))})
	if !ok {
		t.Fatal("not groupable")
	}

	for _, c := range []struct {
		name string
		a, b keySet
		want bool
	}{
		{"whole-node prefix compare vs a GPU claim on the node", wholeNode, gpuOnN1, true},
		{"whole-node claim vs a GPU claim elsewhere", wholeNode, gpuOnN2, false},
		{"a read of a key the other writes", readsN2, gpuOnN2, true},
		{"reads only", readsN2, readsAll, false},
		{"a prefix read over the other's write", readsAll, gpuOnN1, true},
		{"a prefix delete over the other's prefix compare", deletesN1, wholeNode, true},
		{"a prefix delete beside a claim elsewhere", deletesN1, gpuOnN2, false},
		{"a from-key read over a write", fromKey, gpuOnN2, true},
		{"two writes of one key", alsoPutsN2, gpuOnN2, true},
		{"a range delete over a single-key read", rangeDelete, readsN2, true},
		{"a range delete beside a key past its end", rangeDelete, set(nil, clientv3.OpGet(ClaimKey("n2", 7))), false},
		{"an Else read of a key the other writes", elseReadsN2, gpuOnN2, true},
	} {
		for _, order := range [][2]keySet{{c.a, c.b}, {c.b, c.a}} {
			var group keySet
			group.add(order[0])
			if got := group.overlaps(order[1]); got != c.want {
				t.Errorf("%s: overlaps = %v, want %v", c.name, got, c.want)
			}
		}
	}
	if _, ok := keySetOf(nil, nil, []clientv3.Op{clientv3.OpTxn(nil, nil, nil)}); ok {
		t.Error("a nested transaction was found groupable")
	}
}

// StoppedGroupKV is a GroupKV whose committer runs only once start is
// called, for tests that queue transactions first.
func StoppedGroupKV(ctx context.Context, kv clientv3.KV) (g *GroupKV, queued func() int, start func()) {
	g = &GroupKV{KV: kv, ctx: ctx, reqs: make(chan *groupReq, 1024)}
	return g, func() int { return len(g.reqs) }, func() { go g.commitLoop() }
}
