package placement

import (
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
	j, err := jobs.Decode(e.Value)
	switch {
	case e.Deleted:
		delete(s.active, e.Key)
		delete(s.ended, e.Key)
	case err != nil:
		s.Log.Warn("undecodable job record", "job", e.Key, "err", err)
	case j.State == domain.StatePending || j.State.Active():
		s.active[j.ID] = seenJob{job: j, rev: e.Revision}
		delete(s.ended, j.ID)
	default:
		delete(s.active, j.ID)
		s.ended[j.ID] = depend.JobOf(j)
	}
	if err == nil && !j.RunningAt.IsZero() {
		s.recordUsage(j)
	}
	s.mu.Unlock()
	s.poke()
}

// recordUsage keeps a job's GPU use for fair share: as a record while it
// runs, folded into the ledger once it has finished (once: a watch that
// starts again replays every record).
func (s *scheduler) recordUsage(j domain.Job) {
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
