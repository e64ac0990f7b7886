package gang

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Footprints go in batches, each delete guarded on its own: one changed
// since it was listed stays, and keeps none of the others.
func TestDeleteFootprintsInBatchesKeepsOneChangedSinceListed(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	n := footprintDeleteBatch*2 + 3
	var done []footprintRead
	for i := range n {
		id := fmt.Sprintf("job-%03d", i)
		resp, err := env.Etcd.Put(ctx, store.FootprintKey(id), "{}")
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, footprintRead{key: store.FootprintKey(id), id: id, rev: resp.Header.Revision})
	}
	changed := done[footprintDeleteBatch+1] // in the second batch
	if _, err := env.Etcd.Put(ctx, changed.key, `{"nodes":["n1"]}`); err != nil {
		t.Fatal(err)
	}
	s := &service{Started: &config.Started{Etcd: env.Etcd, Log: slog.New(slog.DiscardHandler)}}
	s.deleteFootprints(ctx, done)
	for _, f := range done {
		held := env.Held(t, f.key) > 0
		if want := f.key == changed.key; held != want {
			t.Errorf("footprint %s held = %v, want %v", f.id, held, want)
		}
	}
}
