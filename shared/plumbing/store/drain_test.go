package store_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A replica that finishes attempt 1's drain late must not delete the drain
// record attempt 2 wrote since; its own, an older one, or one that does
// not decode goes.
func TestDeleteDrainKeepsALaterAttemptsRecord(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	key := store.DrainKey("job-1")
	put := func(value string) {
		t.Helper()
		if _, err := env.Etcd.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	exists := func() bool {
		t.Helper()
		resp, err := env.Etcd.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return len(resp.Kvs) > 0
	}
	put(string(store.MustJSON(domain.DrainRecord{JobID: "job-1", Attempt: 2})))
	if err := store.DeleteDrain(ctx, env.Etcd, "job-1", 1); err != nil || !exists() {
		t.Fatalf("attempt 1's late delete: err %v, attempt 2's record left %v", err, exists())
	}
	if err := store.DeleteDrain(ctx, env.Etcd, "job-1", 3); err != nil || exists() {
		t.Fatalf("attempt 3's delete of attempt 2's record: err %v, still there %v", err, exists())
	}
	put("{not json")
	if err := store.DeleteDrain(ctx, env.Etcd, "job-1", 1); err != nil || exists() {
		t.Fatalf("an undecodable record: err %v, still there %v", err, exists())
	}
	if err := store.DeleteDrain(ctx, env.Etcd, "job-1", 1); err != nil {
		t.Fatalf("no record: %v", err)
	}
}
