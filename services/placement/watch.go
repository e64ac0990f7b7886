package placement

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/depend"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// jobChanged mirrors the active jobs and the usage of finished ones from
// the job records (jobs.Store.Follow hands it every record, replayed and
// live), and wakes the cycle.
func (s *scheduler) jobChanged(e jobs.Entry) {
	s.mu.Lock()
	defer s.poke()
	defer s.mu.Unlock()
	if e.Deleted {
		// Retention deleted the record. Forget the job everywhere, folded
		// too: no replay brings the record back, and a mark kept per job
		// would grow with every job the leader ever saw.
		delete(s.active, e.Key)
		delete(s.ended, e.Key)
		delete(s.usage, e.Key)
		delete(s.folded, e.Key)
		return
	}
	// DecodeUnplaced refuses a record naming another job: filed under its own ID
	// it would replace that job's entry, and a decision on it (a
	// dependency never satisfied) would change the other job's record.
	// What a gang holds comes from its allocation (view.go), so a placed
	// record's placement is skipped; a pending one, the only kind explain
	// writes back, comes whole.
	j, err := jobs.DecodeUnplaced(e.Key, e.Value)
	switch {
	case err != nil:
		s.Log.Warn("job record skipped", "job", e.Key, "err", err)
		delete(s.active, e.Key)
		delete(s.ended, e.Key)
	case j.State == domain.StatePending || j.State.Active():
		s.active[j.ID] = &seenJob{job: j, rev: e.Revision}
		delete(s.ended, j.ID)
	default:
		delete(s.active, j.ID)
		s.ended[j.ID] = depend.JobOf(j)
	}
	if err == nil {
		s.recordUsage(j)
	}
}

// recordUsage keeps a job's GPU use for fair share: as a record while it
// runs, folded into the ledger once it has finished (once: a watch that
// starts again replays every record).
//
// An attempt that stopped without the job finishing (requeued, preempted)
// is folded as it stops: left as running, it would charge its queue for
// every hour the job then waits, and its own hours would be lost when the
// next attempt's record replaced it.
func (s *scheduler) recordUsage(j domain.Job) {
	if prev, ok := s.usage[j.ID]; ok && !prev.Start.Equal(j.RunningAt) {
		delete(s.usage, j.ID)
		prev.End = attemptStopped(j, prev.Start)
		s.finished.Add(prev)
	}
	if j.RunningAt.IsZero() {
		return
	}
	rec := queue.UsageRecord{Queue: j.Spec.Queue, GPUs: j.Spec.GPUs(), Start: j.RunningAt}
	if !j.State.Terminal() {
		s.usage[j.ID] = rec
		return
	}
	delete(s.usage, j.ID)
	if !s.folded[j.ID] {
		s.folded[j.ID] = true
		rec.End = j.EndedAt
		s.finished.Add(rec)
	}
}

// attemptStopped is when the attempt that started running at start
// stopped, as far as record j tells: when the job went back to pending (a
// requeue sets PendingSince), else when it ended, else when the next
// attempt started; start itself (no use) when none is later.
func attemptStopped(j domain.Job, start time.Time) time.Time {
	for _, t := range []time.Time{j.PendingSince, j.EndedAt, j.RunningAt} {
		if t.After(start) {
			return t
		}
	}
	return start
}
