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

// Every calls its function until the context ends, and returns then, also
// when the function itself ends the context.
func TestEveryRunsUntilItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan struct{})
	go func() {
		Every(ctx, time.Millisecond, func() {
			if calls++; calls == 3 {
				cancel()
			}
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every outlived its context")
	}
	if calls != 3 {
		t.Fatalf("%d calls, want 3 (none after the context ended)", calls)
	}
}

// Or leaves a set clock alone and makes an unset one the wall clock.
func TestOr(t *testing.T) {
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Or(func() time.Time { return fixed })(); !got.Equal(fixed) {
		t.Errorf("set clock replaced: %v", got)
	}
	if got := Or(nil)(); time.Since(got) > time.Minute || time.Since(got) < 0 {
		t.Errorf("unset clock is not the wall clock: %v", got)
	}
}
