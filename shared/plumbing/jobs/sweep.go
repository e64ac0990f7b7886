package jobs

import (
	"context"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
)

// SweepResult counts what a sweep did.
type SweepResult struct {
	// Deleted records; Changed ones were rewritten after the sweep read
	// them and were left alone.
	Deleted, Changed int
	// Purged delete markers.
	Purged int
}

// Sweep removes the records (and old delete markers) the policy says are
// due at now: one scan of the bucket, then conditional deletes.
func (s *Store) Sweep(ctx context.Context, now time.Time, p RetentionPolicy) (SweepResult, error) {
	var entries []Entry
	if err := s.Scan(ctx, func(e Entry) error { entries = append(entries, e); return nil }); err != nil {
		return SweepResult{}, err
	}
	return s.Apply(ctx, PlanSweep(entries, now, p))
}

// Apply carries out a sweep plan. A record is deleted only if it is still
// at the revision the plan read (a job record that changed since is not
// lost); a marker is purged with everything stored before it under its key,
// so a record created after the marker survives.
func (s *Store) Apply(ctx context.Context, plan SweepPlan) (SweepResult, error) {
	var res SweepResult
	for _, e := range plan.Delete {
		err := s.kv.Delete(ctx, e.Key, jetstream.LastRevision(e.Revision))
		switch {
		case err == nil:
			res.Deleted++
		case isWrongRevision(err):
			res.Changed++
		default:
			return res, errors.Wrapf(err, "delete job record %s", errors.Safe(e.Key))
		}
	}
	if len(plan.Purge) == 0 {
		return res, nil
	}
	stream, prefix, err := s.stream(ctx)
	if err != nil {
		return res, err
	}
	for _, e := range plan.Purge {
		err := stream.Purge(ctx, jetstream.WithPurgeSubject(prefix+e.Key), jetstream.WithPurgeSequence(e.Revision+1))
		if err != nil {
			return res, errors.Wrapf(err, "purge delete marker of job %s", errors.Safe(e.Key))
		}
		res.Purged++
	}
	return res, nil
}

// stream is the bucket's underlying stream and the subject prefix of its
// keys, as the bucket reports them (the KV naming is the client's).
func (s *Store) stream(ctx context.Context) (jetstream.Stream, string, error) {
	st, err := s.kv.Status(ctx)
	if err != nil {
		return nil, "", errors.Wrap(err, "jobs bucket status")
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return nil, "", errors.AssertionFailedf("jobs bucket status is a %T", st)
	}
	cfg := bs.StreamInfo().Config
	if len(cfg.Subjects) != 1 || !strings.HasSuffix(cfg.Subjects[0], ">") {
		return nil, "", errors.AssertionFailedf("jobs bucket stream %s has subjects %v", cfg.Name, cfg.Subjects)
	}
	stream, err := s.js.Stream(ctx, cfg.Name)
	if err != nil {
		return nil, "", errors.Wrapf(err, "jobs bucket stream %s", cfg.Name)
	}
	return stream, strings.TrimSuffix(cfg.Subjects[0], ">"), nil
}
