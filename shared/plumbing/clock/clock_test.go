package clock

import (
	"context"
	"testing"
	"time"
)

// A cancelled context ends the wait at once, however long it was to be.
func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Sleep(ctx, time.Hour); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep outlived its context")
	}
}
