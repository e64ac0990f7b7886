package placement

import (
	"context"
	"time"

	"github.com/lockstep-dev/lockstep/shared/queue"
)

// preemption is a preemptor's outstanding request: the victims asked to
// drain for it, and until when the request stands.
type preemption struct {
	victims []string
	until   time.Time
}

// preempt is filled in by the preemption step (issue 5).
func (s *scheduler) preempt(ctx context.Context, in queue.Input, plan queue.Plan, seen map[string]seenJob, now time.Time) {
}
