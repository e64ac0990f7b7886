package gang

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// dropFootprints deletes the footprints (store.ReadPrior) of finished and
// unknown jobs (lifecycle.FootprintDone), each only if unchanged since
// listed. active is the watch's unfinished records; a job it lacks is
// read, since deleting is final. A job whose record is missing is only
// taken as gone once it has been missing for lifecycle.StaleReadWindow:
// the read may lag, and a footprint deleted under a live job would let its
// next attempt start beside its old ranks.
func (s *service) dropFootprints(ctx context.Context, active map[string]domain.JobBrief) {
	resp, err := s.Etcd.Get(ctx, store.FootprintPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		s.Log.Warn("reconcile: list footprints", "err", err)
		return
	}
	now := s.cfg.Now()
	// This pass's list replaces the last one: a job found again, or whose
	// footprint went, is dropped from it.
	missing := map[string]time.Time{}
	defer func() { s.footprintsMissing = missing }()
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		id := store.LastSegment(key)
		if _, ok := active[id]; ok {
			continue
		}
		full, _, err := s.Jobs.Get(ctx, id)
		if ctx.Err() != nil {
			return // stopping: the next replica's pass goes on
		}
		if err != nil && !errs.IsNotFound(err) {
			s.Log.Warn("reconcile: read job", "job", id, "err", err)
			if since, seen := s.footprintsMissing[id]; seen {
				missing[id] = since // a failed read is no sighting
			}
			continue
		}
		if errs.IsNotFound(err) {
			since, seen := s.footprintsMissing[id]
			if !seen {
				since = now
			}
			missing[id] = since
			if now.Sub(since) < lifecycle.StaleReadWindow {
				continue
			}
		}
		if !lifecycle.FootprintDone(domain.BriefOf(full), err == nil) {
			continue
		}
		if _, err := s.Etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(key)).Commit(); err != nil {
			s.Log.Warn("reconcile: delete footprint", "job", id, "err", err)
		}
	}
}
