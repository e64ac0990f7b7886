package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// stuckCache is a cache that never catches up and whose progress request
// hangs, as on a frozen member, until released.
type stuckCache struct{ release chan struct{} }

func (stuckCache) Rev() int64         { return 0 }
func (c stuckCache) RequestProgress() { <-c.release }

// CatchUp gives up at its timeout even when progress requests hang: they
// are sent, not waited for.
func TestCatchUpDoesNotWaitOnAHangingProgressRequest(t *testing.T) {
	env := testenv.Start(t)
	c := stuckCache{release: make(chan struct{})}
	defer close(c.release)
	returned := make(chan bool, 1)
	go func() { returned <- store.CatchUp(context.Background(), env.Etcd, 50*time.Millisecond, c, c, c, c) }()
	select {
	case caught := <-returned:
		if caught {
			t.Error("CatchUp reported caches that never caught up as caught up")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("CatchUp waited on the progress requests past its timeout")
	}
}
