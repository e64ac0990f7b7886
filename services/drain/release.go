package drain

import (
	"context"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// MetricMalformedAllocations counts alloc/<job> values that did not decode
// or contradicted themselves, released by sweeping (gang counts the same
// under the same name). It lives here, not in shared/plumbing/telemetry, only
// because that package was not this change's to edit.
const MetricMalformedAllocations = "lockstep.allocations.malformed"

func newMalformedCounter(m metric.Meter) (metric.Int64Counter, error) {
	c, err := m.Int64Counter(MetricMalformedAllocations, metric.WithUnit("{allocation}"),
		metric.WithDescription("Allocation records that did not decode or contradicted themselves; their keys were released by sweeping."))
	return c, errors.Wrap(err, "drain instruments")
}

// releaseJob releases a job's allocation of attempt (any when < 0). A
// malformed record does not make it fail: store.ReleaseJob sweeps the
// job's keys instead, and the record is named here.
func (s *service) releaseJob(ctx context.Context, jobID string, attempt int) error {
	r, err := store.ReleaseJob(ctx, s.etcd, jobID, attempt)
	if r.Malformed != nil {
		s.malformed.Add(ctx, 1)
		s.log.WarnContext(ctx, "malformed allocation released by sweeping its keys", "job", jobID, "keys", r.Swept, "err", r.Malformed)
	}
	return err
}
