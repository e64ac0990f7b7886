package jobs

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/domain"
)

// All returns every job record, read through one watch of the bucket (the
// server streams the latest record of every key), not one request per
// key as List does: a reconciler pass over thousands of records costs one
// consumer instead of thousands of round trips. Records that do not decode
// are skipped.
//
// It is not a consistent snapshot: a record changed while the watch
// streams may come out older than it now is, or be missing (as with List,
// whose key listing is the same kind of watch). Confirm with Get before
// acting on an absence or on a state that makes you destroy something.
func (s *Store) All(ctx context.Context) ([]domain.Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, errors.Wrap(err, "watch job records")
	}
	defer func() { _ = w.Stop() }()
	var out []domain.Job
	for {
		select {
		case <-ctx.Done():
			return nil, errors.Wrap(ctx.Err(), "read job records")
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("read job records: watch ended early")
			}
			if e == nil {
				return out, nil // every record delivered
			}
			if j, err := decode(e.Value()); err == nil {
				out = append(out, j)
			}
		}
	}
}
