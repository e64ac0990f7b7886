package gang

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Under load a job read and a delete each take milliseconds of waiting,
// and a cluster ending 500 jobs a second leaves that many footprints a
// second: one at a time, a pass took 27 s for 1,375 of them. So the reads
// run side by side and the deletes go in batches.
const (
	footprintReaders     = 16
	footprintDeleteBatch = 64
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
	var listed []footprintRead
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		id := store.LastSegment(key)
		if _, ok := active[id]; !ok {
			listed = append(listed, footprintRead{key: key, id: id, rev: kv.ModRevision})
		}
	}
	s.readFootprintJobs(ctx, listed)
	if ctx.Err() != nil {
		return // stopping: the next replica's pass goes on
	}
	now := s.cfg.Now()
	// This pass's list replaces the last one: a job found again, or whose
	// footprint went, is dropped from it.
	missing := map[string]time.Time{}
	defer func() { s.footprintsMissing = missing }()
	var done []footprintRead
	for _, f := range listed {
		if f.err != nil && !errs.IsNotFound(f.err) {
			s.Log.Warn("reconcile: read job", "job", f.id, "err", f.err)
			if since, seen := s.footprintsMissing[f.id]; seen {
				missing[f.id] = since // a failed read is no sighting
			}
			continue
		}
		if errs.IsNotFound(f.err) {
			since, seen := s.footprintsMissing[f.id]
			if !seen {
				since = now
			}
			missing[f.id] = since
			if now.Sub(since) < lifecycle.StaleReadWindow {
				continue
			}
		}
		if lifecycle.FootprintDone(f.job, f.err == nil) {
			done = append(done, f)
		}
	}
	s.deleteFootprints(ctx, done)
}

// footprintRead is one listed footprint and what reading its job gave.
type footprintRead struct {
	key, id string
	rev     int64
	job     domain.JobBrief // what the decision needs, not the whole record
	err     error
}

// readFootprintJobs reads the job of every listed footprint, a few at a
// time.
func (s *service) readFootprintJobs(ctx context.Context, listed []footprintRead) {
	next := make(chan *footprintRead)
	var wg sync.WaitGroup
	for range min(footprintReaders, len(listed)) {
		wg.Go(func() {
			for f := range next {
				var full domain.Job
				full, _, f.err = s.Jobs.Get(ctx, f.id)
				f.job = domain.BriefOf(full)
			}
		})
	}
	for i := range listed {
		if ctx.Err() != nil {
			break
		}
		next <- &listed[i]
	}
	close(next)
	wg.Wait()
}

// deleteFootprints deletes each footprint that is unchanged since listed,
// many in one transaction: each delete is a transaction of its own inside
// it, so one footprint changed since keeps no other.
func (s *service) deleteFootprints(ctx context.Context, done []footprintRead) {
	for start := 0; start < len(done) && ctx.Err() == nil; start += footprintDeleteBatch {
		batch := done[start:min(start+footprintDeleteBatch, len(done))]
		ops := make([]clientv3.Op, len(batch))
		for i, f := range batch {
			ops[i] = clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(f.key), "=", f.rev)},
				[]clientv3.Op{clientv3.OpDelete(f.key)}, nil)
		}
		if _, err := s.Etcd.Txn(ctx).Then(ops...).Commit(); err != nil {
			s.Log.Warn("reconcile: delete footprints", "jobs", len(batch), "first", batch[0].id, "err", err)
		}
	}
}
