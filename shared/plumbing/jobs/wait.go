package jobs

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// WaitEnded watches one record until it is in a final state and returns
// it. A record that does not exist yet is waited for (the job may not be
// admitted yet), as is one that does not decode. This is how a client
// learns that a job ended: the record is written by the services alone,
// while an event on the bus may come from any client allowed to publish.
func (s *Store) WaitEnded(ctx context.Context, id string) (domain.Job, error) {
	return s.WatchUntilEnded(ctx, id, nil)
}

// WatchUntilEnded is WaitEnded that hands seen every version of the record
// it reads before the final one (the record as it stands first, then each
// change): how `submit --wait` shows a pending job's reason change.
func (s *Store) WatchUntilEnded(ctx context.Context, id string, seen func(domain.Job)) (domain.Job, error) {
	w, err := s.kv.Watch(ctx, id)
	if err != nil {
		return domain.Job{}, errors.Wrapf(err, "watch job %s", errors.Safe(id))
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return domain.Job{}, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return domain.Job{}, errors.Wrapf(errWatchEnded, "watch job %s", errors.Safe(id))
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			j, err := decode(id, e.Value())
			if err != nil {
				continue
			}
			if j.State.Terminal() {
				return j, nil
			}
			if seen != nil {
				seen(j)
			}
		}
	}
}

// NewRecords follows the records written from the moment it returns (not
// those already there), decoded; one that does not decode or names
// another job is skipped. The channel closes when ctx ends or the watch
// does. A caller that starts it before publishing submissions sees
// admission's verdict on each (its first record) as it is written, with
// no polling.
func (s *Store) NewRecords(ctx context.Context) (<-chan domain.Job, error) {
	w, err := s.kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return nil, errors.Wrap(err, "watch the job records")
	}
	out := make(chan domain.Job, 64)
	go func() {
		defer close(out)
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil || e.Operation() != jetstream.KeyValuePut {
					continue
				}
				j, err := decode(e.Key(), e.Value())
				if err != nil {
					continue
				}
				select {
				case out <- j:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}
