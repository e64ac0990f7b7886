package jobs

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Entry is one key of the bucket as stored: its value undecoded, so a
// caller that must survive a corrupt record (a checker, a sweeper) decides
// what to do with it.
type Entry struct {
	Key      string
	Revision uint64
	// Created is when this revision was written.
	Created time.Time
	Value   []byte
	// Deleted marks a delete or purge marker (Value is empty).
	Deleted bool
	// Own, when set, is the brief of the record this Store wrote as
	// Value, byte for byte (set for Active's follower): what Value
	// decodes to, known without decoding it.
	Own *domain.JobBrief
}

// Scan calls fn for the latest entry of every key, markers included, in
// one pass of one ordered consumer (a List would cost a request per key).
// An error from fn ends the scan and is returned.
func (s *Store) Scan(ctx context.Context, fn func(Entry) error) error {
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return errors.Wrap(err, "scan job records")
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.Wrap(errWatchEnded, "scan job records")
			}
			if e == nil {
				return nil // replay complete
			}
			err := fn(Entry{Key: e.Key(), Revision: e.Revision(), Created: e.Created(), Value: e.Value(),
				Deleted: e.Operation() != jetstream.KeyValuePut})
			if err != nil {
				return err
			}
		}
	}
}
