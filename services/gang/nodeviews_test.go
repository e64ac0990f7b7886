package gang

import (
	"log/slog"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A node record the node caches refuse (valid JSON that fails DecodeNode,
// or one describing another node than its key's) reaches nodeViews only by
// its etcd read, on a cache miss: that read must refuse it too, not take it
// for an up node whose GPUs, address and epoch checkFit then trusts.
func TestNodeViewsRefuseRecordsTheCachesRefuse(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	put := func(key string, value any) {
		t.Helper()
		if _, err := env.Etcd.Put(ctx, key, store.MustJSON(value)); err != nil {
			t.Fatal(err)
		}
	}
	node := func(name string, gpus int) domain.Node {
		return domain.Node{Name: name, Addr: name, GPUs: gpus, Epoch: 1}
	}
	put(store.NodeKey("up"), node("up", 2))
	put(store.NodeKey("negative"), node("negative", -1))
	put(store.NodeKey("impostor"), node("up", 8)) // nodes/impostor describing node up
	put(store.InventoryKey("down"), node("down", 2))
	put(store.InventoryKey("down-impostor"), node("down", 8))
	put(store.InventoryKey("down-negative"), node("down-negative", -1))

	log := slog.New(slog.DiscardHandler)
	s := &service{Started: &config.Started{Etcd: env.Etcd, Log: log}}
	// Both caches empty: every node is a cache miss, read from etcd.
	s.nodes, s.nodeStates = store.NodeCache(env.Etcd, log), store.NodeStateCache(env.Etcd, log)
	var p domain.Placement
	for _, n := range []string{"up", "negative", "impostor", "down", "down-impostor", "down-negative"} {
		p.Nodes = append(p.Nodes, domain.NodePlacement{Node: n})
	}
	views, err := s.nodeViews(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"up": true, "down": false} // node: up
	for name, v := range views {
		up, ok := want[name]
		switch {
		case !ok:
			t.Errorf("node %s: taken for a node (up %v, %+v), though its record fails the caches' checks", name, v.Up, v.Reg)
		case v.Up != up || v.Reg.Name != name:
			t.Errorf("node %s: up %v, registration %+v; want up %v", name, v.Up, v.Reg, up)
		}
	}
	for name := range want {
		if _, ok := views[name]; !ok {
			t.Errorf("node %s: no view", name)
		}
	}
}
