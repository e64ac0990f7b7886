package gang

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// reconcile compares etcd with the job records and repairs what a crash or
// a missed watch event left behind. It observes (etcd listings, the
// watch's records), lifecycle.Reconcile decides, and apply carries out
// each action in order; then the footprints of finished jobs go:
//   - an allocation whose job is finished, gone, or on another attempt is
//     released (one whose attempt is still pending is a reservation being
//     recorded, and is left alone until its launch deadline);
//   - a container gang still pulling past its pull deadline fails, and is
//     released;
//   - an allocation past its launch deadline is released and requeued;
//   - an allocation on a node that is down is requeued;
//   - an active job without its allocation is requeued;
//   - a malformed allocation record, and keys no allocation accounts for,
//     are released;
//   - the footprint of a finished or unknown job is deleted.
func (s *service) reconcile(ctx context.Context) {
	in, ok := s.observe(ctx)
	if !ok {
		return
	}
	for _, act := range lifecycle.Reconcile(in) {
		s.apply(ctx, in, act)
	}
	s.dropFootprints(ctx, in.Active)
}

// observe gathers what a reconciler pass decides from; false (logged) when
// etcd could not be listed.
func (s *service) observe(ctx context.Context) (lifecycle.ReconcileInput, bool) {
	l, err := s.allocations(ctx, true)
	if err != nil {
		s.Log.Warn("reconcile: list allocations", "err", err)
		return lifecycle.ReconcileInput{}, false
	}
	nodes, err := s.Etcd.Get(ctx, store.NodesPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		s.Log.Warn("reconcile: list nodes", "err", err)
		return lifecycle.ReconcileInput{}, false
	}
	up := map[string]bool{}
	for _, kv := range nodes.Kvs {
		up[store.LastSegment(string(kv.Key))] = true
	}
	// The unfinished records as the watch has them, taken after the
	// allocations were listed (as a read per allocation would be).
	active := s.records.Snapshot()
	return lifecycle.ReconcileInput{Allocs: l.allocs, Malformed: l.malformed, Claims: l.claims, Assigns: l.assigns,
		Up: up, Active: active, Now: s.cfg.Now()}, true
}

// stillDue reads a job's allocation again before a deadline action the
// pass decided from its listing, and says whether the deadline still holds
// (lifecycle.StillDue): a report may have passed the launch barrier or
// ended the pull since, on this replica or another.
func (s *service) stillDue(ctx context.Context, act lifecycle.Action, jobID string) (domain.Allocation, bool) {
	fresh, _, found, err := store.GetAllocation(ctx, s.Etcd, jobID)
	if err != nil {
		s.Log.Warn("reconcile: allocation not read again before its deadline action; the next pass decides", "job", jobID, "err", err)
		return fresh, false
	}
	if !found {
		return fresh, false // released meanwhile
	}
	return fresh, lifecycle.StillDue(act, fresh, s.cfg.Now())
}

// apply carries out one action of a pass. A failure is left to the next
// pass, which sees what is still wrong and decides again.
func (s *service) apply(ctx context.Context, in lifecycle.ReconcileInput, act lifecycle.Action) {
	switch act := act.(type) {
	case lifecycle.ConfirmAllocation:
		// Finished, or the watch lags the bucket. Releasing is final, so
		// confirm with a read of the record.
		if job, found, ok := s.confirm(ctx, act.Alloc.JobID); ok {
			if next := lifecycle.JudgeAllocation(act.Alloc, job, found, in.Up, in.Now); next != nil {
				s.apply(ctx, in, next)
			}
		}
	case lifecycle.Release:
		s.forget(act.JobID)
		if err := s.releaseJob(ctx, act.JobID, act.Attempt); err != nil {
			s.Log.Warn("reconcile: release orphan", "job", act.JobID, "err", err)
		}
	case lifecycle.LaunchTimeout:
		if fresh, ok := s.stillDue(ctx, act, act.Alloc.JobID); ok {
			s.launchTimeout(ctx, fresh)
		}
	case lifecycle.FailPull:
		if fresh, ok := s.stillDue(ctx, act, act.Alloc.JobID); ok {
			// Named from the allocation as read again: a node may have
			// reported its image since the listing, and the reason must
			// not name it.
			reason := lifecycle.JudgePull(fresh, nil, s.cfg.Now()).Reason
			if reason == "" {
				reason = act.Reason
			}
			if err := s.failPull(ctx, fresh, 0, reason); err != nil {
				s.Log.Warn("reconcile: fail a gang past its pull deadline", "job", act.Alloc.JobID, "err", err)
			}
		}
	case lifecycle.Requeue:
		_ = s.requeue(ctx, act.Alloc, act.Reason) // not logged, as before: the next pass retries
	case lifecycle.AnnounceRunning:
		if err := s.announceRunning(ctx, act.Alloc); err != nil {
			s.Log.Warn("reconcile: record running", "job", act.Alloc.JobID, "err", err)
		}
	case lifecycle.RequeueUnlessHeld:
		// Re-read: the allocation may have been written since the listing.
		if a, _, found, err := store.GetAllocation(ctx, s.Etcd, act.Alloc.JobID); err != nil || (found && a.Attempt == act.Alloc.Attempt) {
			return
		}
		if err := s.requeue(ctx, act.Alloc, act.Reason); err != nil {
			s.Log.Warn("reconcile: requeue", "job", act.Alloc.JobID, "err", err)
		}
	case lifecycle.DropMalformed:
		if err := s.dropMalformed(ctx, act.JobID, act.Why); err != nil {
			s.Log.Warn("reconcile: release malformed allocation", "job", act.JobID, "err", err)
		}
	case lifecycle.ConfirmStrays:
		// Finished, or the watch lags: sweeping every attempt is final, so
		// confirm with a read of the record.
		if job, found, ok := s.confirm(ctx, act.JobID); ok {
			if next := lifecycle.JudgeStrays(act.JobID, job, found, act.HasAlloc); next != nil {
				s.apply(ctx, in, next)
			}
		}
	case lifecycle.SweepStrays:
		n, err := store.SweepJob(ctx, s.Etcd, act.JobID, act.UpTo)
		if err != nil {
			s.Log.Warn("reconcile: sweep stray keys", "job", act.JobID, "err", err)
			return
		}
		if n > 0 {
			s.Log.Warn("released keys no allocation accounted for", "job", act.JobID, "attempts_up_to", act.UpTo, "keys", n)
		}
	}
}

// confirm reads a job's record before a final action (found false: there
// is none); ok is false, the error logged, when it could not be read.
func (s *service) confirm(ctx context.Context, jobID string) (job domain.JobBrief, found, ok bool) {
	full, _, err := s.Jobs.Get(ctx, jobID)
	if err != nil && !errs.IsNotFound(err) {
		s.Log.Warn("reconcile: read job", "job", jobID, "err", err)
		return domain.JobBrief{}, false, false
	}
	return domain.BriefOf(full), err == nil, true
}
