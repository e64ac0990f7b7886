package gang

import (
	"context"
	"maps"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// replicaState is what one gang replica remembers between messages to save
// etcd round trips on the report path:
//
//   - reports of one job are applied one batch at a time: while a worker
//     applies a job's reports, others arriving for it wait and are then
//     applied together, in one compare-and-set (group commit). All ranks of
//     a gang report at once, and without this they race for the same
//     allocation key, each losing race costing a read and a Txn;
//   - the allocation as this replica last read or wrote it, with its
//     ModRevision, so a report needs no read first; likewise the job
//     record and its KV revision, so running and the end are recorded
//     without a read first. Both are only guesses: every write compares
//     the revision, and a lost compare (another writer) re-reads.
type replicaState struct {
	mu      sync.Mutex
	batches map[string]*reportBatch // by job ID, while a worker applies its reports
	known   map[string]knownAlloc   // by job ID
	jobs    map[string]knownJob     // by job ID, while it holds an allocation
}

// knownJob is a job record as this replica last wrote it, for the
// record's next update without a read first (jobs.Store.UpdateFrom).
type knownJob struct {
	job domain.Job
	rev uint64
}

type knownAlloc struct {
	a   domain.Allocation
	rev int64
}

// reportBatch collects the reports of one job that arrive while a worker
// is applying earlier ones.
type reportBatch struct {
	waiting []*waitingReport
	// more is signalled when a report joins waiting (buffered: whoever
	// appends never blocks), for a worker gathering the gang's reports.
	more chan struct{}
}

type waitingReport struct {
	r    domain.Report
	done chan error // buffered: the applying worker never blocks on it
}

// maxKnown bounds the remembered allocations. Entries normally leave when
// their gang ends here or the reconciler finds them released; this only
// caps what ends elsewhere unseen between two reconciler passes.
const maxKnown = 100_000

// replica returns this replica's report-path state, made on first use.
func (s *service) replica() *replicaState {
	s.replicaOnce.Do(func() {
		s.reports = &replicaState{
			batches: map[string]*reportBatch{}, known: map[string]knownAlloc{}, jobs: map[string]knownJob{},
		}
	})
	return s.reports
}

// submitReport applies r together with any other reports of its job that
// arrive meanwhile, and returns once r's effect is durable (or failed).
func (s *service) submitReport(ctx context.Context, r domain.Report) error {
	rs := s.replica()
	rs.mu.Lock()
	if b, busy := rs.batches[r.JobID]; busy {
		w := &waitingReport{r: r, done: make(chan error, 1)}
		b.waiting = append(b.waiting, w)
		rs.mu.Unlock()
		select {
		case b.more <- struct{}{}:
		default:
		}
		select {
		case err := <-w.done:
			return err
		case <-ctx.Done():
			// Shutting down: the message is redelivered; applying it twice
			// is harmless.
			return ctx.Err()
		}
	}
	b := &reportBatch{more: make(chan struct{}, 1)}
	rs.batches[r.JobID] = b
	rs.mu.Unlock()

	// This worker applies its own report, then whatever queued up behind
	// it, until nothing is waiting; each batch with the rest of the gang's
	// reports if they come soon (gather): the first exits often queue up
	// behind the launch barrier's batch.
	batch, gathered := s.gather(ctx, rs, b, []domain.Report{r})
	own := s.applyBatch(ctx, batch)
	for _, w := range gathered {
		w.done <- own
	}
	for {
		rs.mu.Lock()
		waiting := b.waiting
		b.waiting = nil
		if len(waiting) == 0 {
			delete(rs.batches, r.JobID)
		}
		rs.mu.Unlock()
		if len(waiting) == 0 {
			return own
		}
		batch := make([]domain.Report, len(waiting))
		for i, w := range waiting {
			batch[i] = w.r
		}
		batch, gathered := s.gather(ctx, rs, b, batch)
		err := s.applyBatch(ctx, batch)
		for _, w := range append(waiting, gathered...) {
			w.done <- err
		}
	}
}

// knownAllocation returns the allocation as last seen here (a copy the
// caller may change), or reads it from etcd when fresh is set or nothing is
// remembered. cached says the answer came from memory.
func (s *service) knownAllocation(ctx context.Context, jobID string, fresh bool) (a domain.Allocation, rev int64, found, cached bool, err error) {
	rs := s.replica()
	if !fresh {
		rs.mu.Lock()
		k, ok := rs.known[jobID]
		rs.mu.Unlock()
		if ok {
			return cloneAllocation(k.a), k.rev, true, true, nil
		}
	}
	a, rev, found, err = store.GetAllocation(ctx, s.Etcd, jobID)
	if err != nil {
		return a, 0, false, false, err
	}
	if found {
		s.remember(a, rev)
	} else {
		s.forget(jobID)
	}
	return a, rev, found, false, nil
}

// remember records an allocation as written or read at rev.
func (s *service) remember(a domain.Allocation, rev int64) {
	rs := s.replica()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	putBounded(rs.known, a.JobID, knownAlloc{a: cloneAllocation(a), rev: rev})
}

// putBounded sets m[k] = v, first emptying m when it holds maxKnown
// entries: the replica's memory is a cache, and anything dropped is read
// again from etcd or the KV.
func putBounded[K comparable, V any](m map[K]V, k K, v V) {
	if len(m) >= maxKnown {
		clear(m)
	}
	m[k] = v
}

// forget drops a remembered allocation and job record.
func (s *service) forget(jobID string) {
	rs := s.replica()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.known, jobID)
	delete(rs.jobs, jobID)
}

// rememberJob records a job record as written at rev.
func (s *service) rememberJob(j domain.Job, rev uint64) {
	rs := s.replica()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	putBounded(rs.jobs, j.ID, knownJob{job: j, rev: rev})
}

// knownJob returns the remembered record of a job, or (a record with only
// the ID, 0) when none is: jobs.Store.UpdateFrom then reads it.
func (s *service) knownJob(id string) (domain.Job, uint64) {
	rs := s.replica()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if k, ok := rs.jobs[id]; ok {
		return k.job, k.rev
	}
	return domain.Job{ID: id}, 0
}

// forgetAllBut drops every remembered allocation not in live (the job IDs
// of the allocations etcd listed), except those written after the listing.
func (s *service) forgetAllBut(live map[string]bool, listedAt int64) {
	rs := s.replica()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for id, k := range rs.known {
		if !live[id] && k.rev <= listedAt {
			delete(rs.known, id)
		}
	}
	for id := range rs.jobs {
		if _, ok := rs.known[id]; !ok {
			delete(rs.jobs, id)
		}
	}
}

// cloneAllocation copies the maps a report changes.
func cloneAllocation(a domain.Allocation) domain.Allocation {
	a.Started = maps.Clone(a.Started)
	a.Exited = maps.Clone(a.Exited)
	a.Pull = a.Pull.Clone()
	return a
}
