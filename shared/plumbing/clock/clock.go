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

// Sleep waits d, or less when ctx ends first (the caller checks ctx).
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
