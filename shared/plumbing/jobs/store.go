// Package jobs stores job records in the JetStream KV bucket that is
// Lockstep's durable queue. Every change is a compare-and-set on the
// record's revision, so concurrent replicas never overwrite each other.
package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// Store reads and writes job records.
type Store struct {
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	own ownWrites
}

// Open binds the jobs bucket (created by bus.EnsureStreams).
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		return nil, errors.Wrapf(err, "open kv bucket %s", subjects.BucketJobs)
	}
	return &Store{js: js, kv: kv}, nil
}

// Get returns a job and its revision; errs.ErrNotFound when absent.
func (s *Store) Get(ctx context.Context, id string) (domain.Job, uint64, error) {
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return domain.Job{}, 0, errors.Mark(errors.Newf("job %s not found", errors.Safe(id)), errs.ErrNotFound)
	}
	if err != nil {
		return domain.Job{}, 0, errors.Wrapf(err, "get job %s", errors.Safe(id))
	}
	j, err := decode(id, e.Value())
	if err != nil {
		return domain.Job{}, 0, err
	}
	return j, e.Revision(), nil
}

// Create writes a new job; errs.ErrConflict when the ID exists.
func (s *Store) Create(ctx context.Context, j domain.Job) error {
	data, err := json.Marshal(j)
	if err != nil {
		return errors.Wrapf(err, "encode job %s", errors.Safe(j.ID))
	}
	s.own.note(j.ID, j, data)
	if _, err := s.kv.Create(ctx, j.ID, data); err != nil {
		s.own.forget(j.ID, data)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return errs.MarkConflict(errors.Newf("job %s already exists", errors.Safe(j.ID)))
		}
		return errors.Wrapf(err, "create job %s", errors.Safe(j.ID))
	}
	return nil
}

// Mutator changes a job in place and reports whether it changed anything.
// It may be called several times (after lost races) and must be pure.
type Mutator func(j *domain.Job) (changed bool, err error)

// UpdateAt is Update starting from a record the caller already read (at
// rev), saving a read on the common path where nobody raced.
func (s *Store) UpdateAt(ctx context.Context, j domain.Job, rev uint64, fn Mutator) (domain.Job, bool, error) {
	out, changed, raced, err := s.apply(ctx, j.ID, j, rev, fn)
	if !raced {
		return out, changed, err
	}
	return s.Update(ctx, j.ID, fn)
}

// Update applies fn with compare-and-set, retrying on lost races. It returns
// the job as stored afterwards and whether fn changed it.
func (s *Store) Update(ctx context.Context, id string, fn Mutator) (domain.Job, bool, error) {
	for attempt := 0; ; attempt++ {
		j, rev, err := s.Get(ctx, id)
		if err != nil {
			return domain.Job{}, false, err
		}
		out, changed, raced, err := s.apply(ctx, id, j, rev, fn)
		if !raced {
			return out, changed, err
		}
		if attempt > 50 {
			return out, false, errs.MarkConflict(errors.Newf("job %s: too many concurrent updates", errors.Safe(id)))
		}
		select {
		case <-ctx.Done():
			return out, false, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// apply is one compare-and-set: fn changes j, read from key id at rev, and
// the result is stored if fn changed it. raced reports that another writer
// stored the record first: nothing was written, and the caller reads it
// again to retry.
func (s *Store) apply(ctx context.Context, id string, j domain.Job, rev uint64, fn Mutator) (out domain.Job, changed, raced bool, err error) {
	if changed, err = fn(&j); err != nil || !changed {
		return j, false, false, err
	}
	data, err := json.Marshal(j)
	if err != nil {
		return j, false, false, errors.Wrapf(err, "encode job %s", errors.Safe(id))
	}
	_, err = s.update(ctx, id, j, data, rev)
	switch {
	case err == nil:
		return j, true, false, nil
	case isWrongRevision(err):
		return j, false, true, nil
	}
	return j, false, false, errors.Wrapf(err, "update job %s", errors.Safe(id))
}

// update writes data, the encoding of j, under id if the record is still
// at rev. Its brief is noted first, for the Store's follower (the watch
// may deliver the write before its answer comes), and forgotten if the
// write fails.
func (s *Store) update(ctx context.Context, id string, j domain.Job, data []byte, rev uint64) (uint64, error) {
	s.own.note(id, j, data)
	next, err := s.kv.Update(ctx, id, data, rev)
	if err != nil {
		s.own.forget(id, data)
	}
	return next, err
}

func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// List returns every job record.
func (s *Store) List(ctx context.Context) ([]domain.Job, error) {
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, errors.Wrap(err, "list job keys")
	}
	var out []domain.Job
	for key := range lister.Keys() {
		j, _, err := s.Get(ctx, key)
		if errs.IsNotFound(err) {
			continue // deleted between list and get
		}
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// LastRevision is the revision of the latest change to any record: a
// watcher that has delivered it is current (Follow's watchdog compares).
func (s *Store) LastRevision(ctx context.Context) (uint64, error) {
	st, err := s.kv.Status(ctx)
	if err != nil {
		return 0, errors.Wrap(err, "jobs bucket status")
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return 0, errors.AssertionFailedf("jobs bucket status is a %T", st)
	}
	return bs.StreamInfo().State.LastSeq, nil
}

// Decode parses the job record stored at key. A record that names another
// job than its key is refused with the rest: taken for the key's, it would
// lend another job's owner, state and attempt to it (and an update would
// write them back under the key). That refusal is permanent: retrying
// cannot mend the record, and lockstep check names it.
func Decode(key string, data []byte) (domain.Job, error) { return decode(key, data) }

func decode(key string, data []byte) (domain.Job, error) {
	var j domain.Job
	if err := DecodeInto(key, data, &j, &j.ID); err != nil {
		return domain.Job{}, err
	}
	return j, nil
}

// DecodeInto parses the job record stored at key into v, a domain.Job or
// a view of the fields a reader keeps, and refuses it, as Decode does,
// when id (v's ID field) then names another job than the key. Every
// decoder of job records goes through it, whole or in part, so that none
// files a record under another job's key.
func DecodeInto(key string, data []byte, v any, id *string) error {
	if err := codec.Decode(data, v); err != nil {
		return errors.Wrapf(err, "job %s: decode job record", errors.Safe(key))
	}
	if *id != key {
		return errs.MarkPermanent(errors.Newf("job %s: the record names job %q", errors.Safe(key), *id))
	}
	return nil
}
