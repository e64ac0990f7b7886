// Package clock holds the waiting every loop of Lockstep does the same way.
package clock

import (
	"context"
	"time"
)

// Or is now, or time.Now where now is nil: the default of a clock a
// Config left unset.
func Or(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// Every calls fn every d until ctx ends, the first time d from now. As
// with a time.Ticker, a call that overruns d is followed by the next one
// at once, not by one for every tick it missed.
func Every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ctx.Err() != nil {
			return // both were ready, and select picked the tick
		}
		fn()
	}
}

// Sleep waits d, or less when ctx ends first (the caller checks ctx).
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
