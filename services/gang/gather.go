package gang

import (
	"context"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// DefaultReportGather is how long a worker holding the first reports of a
// gang waits for the rest before recording them as progress. Every node of a
// gang sees its assignment from the same etcd revision and starts at
// about the same time, and ranks that run the same steps end together,
// so the other nodes' reports usually come within milliseconds. Gathered,
// the gang's starts become one write (the launch barrier's) instead of
// one per arrival, and its clean exits none (the release deletes the
// allocation). The wait ends as soon as the batch would pass the barrier
// or end the gang, so it never delays either; it delays only a progress
// write that nothing waits for. The reports stay unacknowledged until
// they are applied, so a replica that dies while gathering loses none.
const DefaultReportGather = 20 * time.Millisecond

// gather returns batch, holding the first reports of a job, with the
// reports of the same job that join it (b.waiting) while what batch holds
// would only be recorded as progress (gathersProgress), for at most
// Config.ReportGather. The waiting reports it took are returned, to be
// answered with the batch's outcome. The allocation it judges by is the
// one this replica remembers, which another replica's write may have made
// stale: that decides only whether to wait (at worst the gathering time
// for nothing), never what is written, which applyReports compares with
// etcd as ever.
func (s *service) gather(ctx context.Context, rs *replicaState, b *reportBatch, batch []domain.Report) ([]domain.Report, []*waitingReport) {
	a, ok := s.rememberedAllocation(batch[0].JobID)
	if !ok || !gathersProgress(a, batch) {
		return batch, nil
	}
	var taken []*waitingReport
	deadline := time.NewTimer(s.cfg.ReportGather)
	defer deadline.Stop()
	for {
		select {
		case <-b.more:
		case <-deadline.C:
			return batch, taken
		case <-ctx.Done():
			return batch, taken
		}
		rs.mu.Lock()
		joined := b.waiting
		b.waiting = nil
		rs.mu.Unlock()
		for _, w := range joined {
			batch = append(batch, w.r)
			taken = append(taken, w)
		}
		if !gathersProgress(a, batch) {
			return batch, taken
		}
	}
}

// gathersProgress reports whether batch, applied to a, would only record
// starts or clean exits short of the launch barrier and the gang's end:
// the one outcome worth waiting on for more of the gang's reports. Reports
// of another attempt, pulls and failures are applied at once.
func gathersProgress(a domain.Allocation, batch []domain.Report) bool {
	for _, r := range batch {
		switch {
		case r.Attempt != a.Attempt || !a.Placement.Places(r.Node):
			return false
		case r.Kind == domain.ReportStarted, r.Kind == domain.ReportExited && r.ExitCode == 0:
		default:
			return false
		}
	}
	p := fold(a, batch)
	return p.changed && p.ending == nil && !p.barrier && !p.pullDone && !p.next.AllExited()
}
