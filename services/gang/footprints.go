package gang

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// footprintDone decides, purely, whether a job's footprint (where its
// reservations look for ranks of earlier ones, store.ReadPrior) may go: a
// finished or unknown job is never reserved again, so nothing reads it.
func footprintDone(job jobs.Brief, found bool) bool { return !found || job.State.Terminal() }

// dropFootprints deletes the footprints of finished and unknown jobs, each
// only if unchanged since listed. active is the watch's unfinished records;
// a job it lacks is read, since deleting is final.
func (s *service) dropFootprints(ctx context.Context, active map[string]jobs.Brief) {
	resp, err := s.etcd.Get(ctx, store.FootprintPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		s.log.Warn("reconcile: list footprints", "err", err)
		return
	}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		id := store.LastSegment(key)
		if _, ok := active[id]; ok {
			continue
		}
		full, _, err := s.jobs.Get(ctx, id)
		if err != nil && !errs.IsNotFound(err) {
			s.log.Warn("reconcile: read job", "job", id, "err", err)
			continue
		}
		if !footprintDone(jobs.BriefOf(full), err == nil) {
			continue
		}
		if _, err := s.etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(key)).Commit(); err != nil {
			s.log.Warn("reconcile: delete footprint", "job", id, "err", err)
		}
	}
}
