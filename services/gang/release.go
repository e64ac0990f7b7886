package gang

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// releaseJob releases a job's allocation of attempt (any when < 0),
// naming a malformed record it had to sweep instead.
func (s *service) releaseJob(ctx context.Context, jobID string, attempt int) error {
	r, err := store.ReleaseJob(ctx, s.Etcd, jobID, attempt)
	s.noteRelease(ctx, jobID, r)
	return err
}

// releaseAttempt releases everything of an attempt that must be over
// before the job moves on, record or no record (store.ReleaseAttempt).
func (s *service) releaseAttempt(ctx context.Context, jobID string, attempt int) error {
	r, err := store.ReleaseAttempt(ctx, s.Etcd, jobID, attempt)
	s.noteRelease(ctx, jobID, r)
	return err
}

func (s *service) noteRelease(ctx context.Context, jobID string, r store.Released) {
	if r.Malformed != nil {
		s.Tel.Metrics.MalformedAllocations.Add(ctx, 1)
		s.Log.WarnContext(ctx, "malformed allocation released by sweeping its keys", "job", jobID, "keys", r.Swept, "err", r.Malformed)
	} else if r.Swept > 0 {
		s.Log.WarnContext(ctx, "allocation keys without their record released", "job", jobID, "keys", r.Swept)
	}
}

// dropMalformed handles an allocation record that cannot be used (why
// names the key and the field): instead of failing on it again and again,
// it releases what can be released — the record, and the job's claims and
// assignments found by their values — and requeues the job's attempt if it
// was active, the reason (naming the key) going on the requeued event.
func (s *service) dropMalformed(ctx context.Context, jobID string, why error) error {
	s.forget(jobID)
	job, _, err := s.Jobs.Get(ctx, jobID)
	switch {
	case errs.IsNotFound(err):
		return s.releaseJob(ctx, jobID, -1)
	case err != nil:
		return err
	case job.State.Active():
		// requeue releases the attempt (sweeping the malformed record)
		// before the job moves on.
		return s.requeue(ctx, domain.Allocation{JobID: jobID, Attempt: job.Attempt, TraceParent: job.TraceParent},
			"allocation record malformed and released: "+why.Error())
	case job.State.Terminal():
		return s.releaseJob(ctx, jobID, -1)
	}
	return s.releaseJob(ctx, jobID, job.Attempt)
}

// release deletes the allocation if it is still the one read at rev, and
// otherwise whatever allocation that attempt holds now.
func (s *service) release(ctx context.Context, a domain.Allocation, rev int64) error {
	return s.releaseWith(ctx, a, rev, store.Release)
}

// releaseFinished is release for an attempt whose job record is final: the
// job's footprint goes with the allocation (store.ReleaseFinished). When
// the allocation changed since rev, the footprint is left to the
// reconciler, which deletes those of finished jobs.
func (s *service) releaseFinished(ctx context.Context, a domain.Allocation, rev int64) error {
	return s.releaseWith(ctx, a, rev, store.ReleaseFinished)
}

func (s *service) releaseWith(ctx context.Context, a domain.Allocation, rev int64,
	releaseAt func(context.Context, clientv3.KV, domain.Allocation, int64) (bool, error)) error {
	s.forget(a.JobID)
	if rev > 0 {
		ok, err := releaseAt(ctx, s.txns, a, rev)
		if ok {
			// After the barrier the lease went back already and may be
			// lent again: Return ignores a borrower it no longer lends to.
			s.leases.Return(clientv3.LeaseID(a.Lease), borrower(a))
		}
		if err != nil || ok {
			return err
		}
	}
	return s.releaseJob(ctx, a.JobID, a.Attempt)
}
