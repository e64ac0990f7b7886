// Package clock holds the waiting every loop of Lockstep does the same way.
package clock

import (
	"context"
	"time"
)

// Sleep waits d, or less when ctx ends first (the caller checks ctx).
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
