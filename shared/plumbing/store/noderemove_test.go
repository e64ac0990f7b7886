package store_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A node goes only when down and idle, and then with its admin state; in
// every other case the error says what holds it.
func TestRemoveNodeOnlyWhenDownAndIdle(t *testing.T) {
	env := testenv.Start(t)
	ctx, kv := t.Context(), env.Etcd
	put := func(key string) {
		t.Helper()
		if _, err := kv.Put(ctx, key, "{}"); err != nil {
			t.Fatal(err)
		}
	}
	del := func(key string) {
		t.Helper()
		if _, err := kv.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.RemoveNode(ctx, kv, "n1"); err == nil || !strings.Contains(err.Error(), "not in the inventory") {
		t.Fatalf("unknown node: %v", err)
	}
	put(store.InventoryKey("n1"))
	put(store.NodeStateKey("n1"))
	put(store.InventoryKey("n10")) // a name n1 is a prefix of stays
	put(store.ClaimKey("n10", 0))
	for _, tc := range []struct {
		key, want string
	}{
		{store.NodeKey("n1"), "is up"},
		{store.ClaimKey("n1", 3), "holds GPU claims of a gang (claim keys: 1)"},
		{store.WholeNodeClaimKey("n1"), "holds GPU claims of a gang (claim keys: 1)"},
		{store.AssignKey("n1", "job-7"), "assigned jobs [job-7]"},
		{store.RunningKey("n1", "job-7"), "running ranks"},
	} {
		put(tc.key)
		err := store.RemoveNode(ctx, kv, "n1")
		if !errors.Is(err, store.ErrNodeInUse) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("with %s: %v, want in use: %s", tc.key, err, tc.want)
		}
		del(tc.key)
	}
	if err := store.RemoveNode(ctx, kv, "n1"); err != nil {
		t.Fatalf("down, idle node: %v", err)
	}
	for key, want := range map[string]int64{store.InventoryKey("n1"): 0, store.NodeStateKey("n1"): 0, store.InventoryKey("n10"): 1} {
		resp, err := kv.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != want {
			t.Errorf("%s: %d keys after the removal, want %d", key, resp.Count, want)
		}
	}
}
