package drain

import (
	"context"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// releaseJob releases a job's allocation of attempt (any when < 0). A
// malformed record does not make it fail: store.ReleaseJob sweeps the
// job's keys instead, and the record is named here.
func (s *service) releaseJob(ctx context.Context, jobID string, attempt int) error {
	r, err := store.ReleaseJob(ctx, s.Etcd, jobID, attempt)
	if r.Malformed != nil {
		s.Tel.Metrics.MalformedAllocations.Add(ctx, 1)
		s.Log.WarnContext(ctx, "malformed allocation released by sweeping its keys", "job", jobID, "keys", r.Swept, "err", r.Malformed)
	}
	return err
}
