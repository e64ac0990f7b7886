package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// UpdateFrom is Update starting from a record the caller remembers (j, read
// or written at rev; rev 0 means none), saving the read when nobody else
// changed it since. The record may be stale: the compare-and-set then fails
// and the record is read again, and an answer of "nothing to change" from
// fn is believed only on a record just read. It returns the record as
// stored afterwards, its revision, and whether fn changed it.
func (s *Store) UpdateFrom(ctx context.Context, j domain.Job, rev uint64, fn Mutator) (domain.Job, uint64, bool, error) {
	id := j.ID
	fresh := false
	for attempt := 0; ; attempt++ {
		if rev == 0 {
			var err error
			if j, rev, err = s.Get(ctx, id); err != nil {
				return domain.Job{}, 0, false, err
			}
			fresh = true
		}
		read := j
		changed, err := fn(&j)
		if err != nil {
			return j, rev, false, err
		}
		if !changed {
			if fresh {
				return j, rev, false, nil
			}
			rev = 0 // remembered: confirm on a fresh read
			continue
		}
		data, err := json.Marshal(j)
		if err != nil {
			return read, rev, false, errors.Wrapf(err, "encode job %s", errors.Safe(id))
		}
		next, err := s.update(ctx, id, j, data, rev)
		if err == nil {
			return j, next, true, nil
		}
		if !isWrongRevision(err) {
			return read, rev, false, errors.Wrapf(err, "update job %s", errors.Safe(id))
		}
		if attempt > 50 {
			return read, rev, false, errs.MarkConflict(errors.Newf("job %s: too many concurrent updates", errors.Safe(id)))
		}
		rev = 0
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return read, 0, false, ctx.Err()
			case <-time.After(time.Duration(attempt) * time.Millisecond):
			}
		}
	}
}
