package bus_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// One consumer stopping on its own stops the rest and waits for them
// before the error naming it; a context that ends is no error.
func TestWaitConsumers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var others atomic.Int32
	done := map[string]<-chan struct{}{}
	for _, name := range []string{"a", "b"} {
		ch := make(chan struct{})
		done[name] = ch
		go func() {
			<-ctx.Done() // a consumer stops when its context ends
			others.Add(1)
			close(ch)
		}()
	}
	dead := make(chan struct{})
	close(dead)
	done["dead"] = dead
	err := bus.WaitConsumers(ctx, cancel, done)
	if err == nil || !strings.Contains(err.Error(), "the dead consumer stopped") {
		t.Errorf("error %v, want the dead consumer named", err)
	}
	if n := others.Load(); n != 2 {
		t.Errorf("returned with %d of the 2 other consumers stopped", n)
	}

	ended, stop := context.WithCancel(context.Background())
	stop()
	closed := make(chan struct{})
	close(closed)
	if err := bus.WaitConsumers(ended, stop, map[string]<-chan struct{}{"x": closed}); err != nil {
		t.Errorf("a consumer stopping as its context ended: %v", err)
	}
}
