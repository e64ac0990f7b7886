package gang

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// awaitRanks answers a reservation refused because agents still report
// ranks of the job alive (an earlier attempt being stopped): the job stays
// pending with the nodes named, and is proposed again when the last of its
// running keys goes — a watch, not a retry loop that would propose it
// again and again for as long as a rank ignores SIGTERM.
func (s *service) awaitRanks(ctx context.Context, job domain.Job, rev uint64, r refusal) error {
	reason := strings.Join(r.conflicts, "; ")
	s.Log.InfoContext(ctx, "ranks of an earlier attempt still alive; waiting for them", "job", job.ID, "attempt", job.Attempt, "conflicts", r.conflicts)
	s.ranks.await(job.ID, job.Attempt, r.ranks, r.rev)
	updated, changed, err := s.Jobs.UpdateAt(ctx, job, rev, func(j *domain.Job) (bool, error) {
		return j.SetPendingReason(job.Attempt, domain.ReasonConflict+": "+reason, j.Detail), nil
	})
	if err != nil || !changed {
		return err
	}
	s.Tel.Metrics.Conflicts.Add(ctx, 1)
	ev := events.ForJob(events.Conflict, updated, s.cfg.Now())
	ev.Reason, ev.Conflicts = reason, r.conflicts
	return s.Bus.PublishEvent(ctx, ev)
}

// ranksEnded proposes the job again: bumping its conflict count is what
// makes placement drop the proposal it has in flight and send a new one.
func (s *service) ranksEnded(ctx context.Context, jobID string, attempt int) error {
	_, _, err := s.Jobs.Update(ctx, jobID, func(j *domain.Job) (bool, error) {
		return j.Conflict(attempt, "ranks of the earlier attempt ended"), nil
	})
	return err
}

// rankWaits follows the running keys of the jobs awaitRanks parked, one
// watch per job, until none is left.
type rankWaits struct {
	// ctx is the serving session's: a wait ends with it (another replica,
	// or placement's proposal timeout, proposes the job again then).
	ctx   context.Context
	cli   *clientv3.Client
	log   *slog.Logger
	ended func(ctx context.Context, jobID string, attempt int) error

	mu      sync.Mutex
	waiting map[string]bool
}

func newRankWaits(ctx context.Context, cli *clientv3.Client, log *slog.Logger, ended func(context.Context, string, int) error) *rankWaits {
	return &rankWaits{ctx: ctx, cli: cli, log: log, ended: ended, waiting: map[string]bool{}}
}

// await starts following the job's running keys, present at rev as keys,
// unless it is followed already.
func (w *rankWaits) await(jobID string, attempt int, keys []string, rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[jobID] {
		return
	}
	w.waiting[jobID] = true
	go func() {
		defer func() {
			w.mu.Lock()
			delete(w.waiting, jobID)
			w.mu.Unlock()
		}()
		if !w.untilGone(jobID, keys, rev) {
			return
		}
		for i := 0; w.ctx.Err() == nil; i++ {
			err := w.ended(w.ctx, jobID, attempt)
			if err == nil {
				return
			}
			w.log.Warn("job not proposed again after its ranks ended, retrying", "job", jobID, "err", err)
			clock.Sleep(w.ctx, min(time.Duration(i+1)*200*time.Millisecond, 5*time.Second))
		}
	}()
}

// watchUntilGone watches [from, to) from rev, striking deleted keys off
// left, until none is left (gone) or the watch breaks (its error). The
// watch ends with it: one left open would hold a goroutine, a gRPC stream
// and a server-side watcher until the replica stops, for every job whose
// ranks were waited for.
func (w *rankWaits) watchUntilGone(left map[string]bool, from, to string, rev int64) (gone bool, err error) {
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	ws := store.Watch(ctx, w.cli, from, rev, clientv3.WithRange(to), clientv3.WithFilterPut())
	for resp := range ws.C {
		for _, ev := range resp.Events {
			delete(left, string(ev.Kv.Key))
		}
		if len(left) == 0 {
			return true, nil
		}
	}
	return false, ws.Err()
}

// untilGone returns true once none of the job's running keys present at
// rev (keys) is left, false if ctx ended first. The keys are in different
// nodes' ranges (running/<node>/<job>): one watch covers the span from the
// first to the last (other jobs' deletes in it are skipped), and a broken
// watch starts again from a fresh read. A key that appears on another
// node meanwhile is not waited for here: the next reservation compares
// it, and waits again.
func (w *rankWaits) untilGone(jobID string, keys []string, rev int64) bool {
	left := map[string]bool{}
	for _, k := range keys {
		left[k] = true
	}
	if len(left) == 0 {
		return true
	}
	from, to := slices.Min(keys), slices.Max(keys)+"\x00"
	for w.ctx.Err() == nil {
		gone, err := w.watchUntilGone(left, from, to, rev)
		if gone {
			return true
		}
		if w.ctx.Err() != nil {
			return false
		}
		w.log.Warn("running keys watch broken; reading them again", "job", jobID, "err", err)
		resp, err := w.cli.Get(w.ctx, from, clientv3.WithRange(to), clientv3.WithKeysOnly())
		if err != nil {
			clock.Sleep(w.ctx, time.Second)
			continue
		}
		present := map[string]bool{}
		for _, kv := range resp.Kvs {
			present[string(kv.Key)] = true
		}
		for k := range left {
			if !present[k] {
				delete(left, k)
			}
		}
		if len(left) == 0 {
			return true
		}
		rev = resp.Header.Revision
	}
	return false
}
