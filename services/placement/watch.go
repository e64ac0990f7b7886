package placement

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// watchStall is how long the job watch may deliver nothing while the
// bucket has newer records before it is restarted.
const watchStall = 3 * time.Second

// watchJobs keeps the job watch running for as long as ctx lasts:
// re-created when it ends, and restarted when it stalls. A watch is an
// ordered consumer on one NATS server; when that server dies the client
// notices only after missed heartbeats (about 10 s), and placement would
// not see new jobs in the meantime. Comparing what it delivered with the
// bucket's latest revision once a second catches that (and any other
// stall) within watchStall.
func (s *scheduler) watchJobs(ctx context.Context) {
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(ctx)
		w, err := s.jobs.Watch(wctx)
		if err != nil {
			cancel()
			s.log.Warn("job watch failed; retrying", "err", err)
			clock.Sleep(ctx, time.Second)
			continue
		}
		go s.watchdog(wctx, cancel)
		s.followJobs(wctx, w)
		_ = w.Stop()
		cancel()
	}
}

// watchdog cancels the watch when it has fallen behind the bucket and made
// no progress for watchStall. A watch that lags but moves is left alone.
func (s *scheduler) watchdog(ctx context.Context, restart context.CancelFunc) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var stuckAt uint64 // the revision the watch was at when it fell behind
	var since time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		last, err := s.jobs.LastRevision(ctx)
		s.mu.Lock()
		seen := s.seenRev
		s.mu.Unlock()
		switch {
		case err != nil || last <= seen:
			since = time.Time{}
		case since.IsZero() || seen != stuckAt:
			stuckAt, since = seen, time.Now()
		case time.Since(since) >= watchStall:
			s.log.Warn("job watch stalled; restarting it", "delivered", seen, "latest", last, "for", time.Since(since).Round(time.Second))
			restart()
			return
		}
	}
}

// followJobs mirrors the active jobs and the usage of finished ones from
// the KV watch.
func (s *scheduler) followJobs(ctx context.Context, w jetstream.KeyWatcher) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				continue // end of the initial replay
			}
			s.mu.Lock()
			j, err := jobs.Decode(e.Value())
			switch {
			case e.Operation() != jetstream.KeyValuePut:
				delete(s.active, e.Key())
			case err != nil:
				s.log.Warn("undecodable job record", "job", e.Key(), "err", err)
			case j.State == domain.StatePending || j.State.Active():
				s.active[j.ID] = seenJob{job: j, rev: e.Revision()}
			default:
				delete(s.active, j.ID)
			}
			if err == nil && !j.RunningAt.IsZero() {
				s.recordUsage(j)
			}
			s.seenRev = max(s.seenRev, e.Revision())
			s.mu.Unlock()
			s.poke()
		}
	}
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
