package accounting

import (
	"cmp"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// UsageRow is one owner's use of one queue, as sreport sums it.
type UsageRow struct {
	Owner    string  `json:"owner"`
	Queue    string  `json:"queue"`
	Jobs     int     `json:"jobs"`
	GPUHours float64 `json:"gpuHours"`
	// MeanGangWait is over the jobs whose gang was reserved at least once.
	MeanGangWait time.Duration `json:"meanGangWait"`
	// Efficiency is η over the jobs' summed terms.
	Efficiency float64 `json:"efficiency"`
}

// Usage sums rows per owner and queue, ordered by owner, then queue.
func Usage(rows []Row) []UsageRow {
	type key struct{ owner, queue string }
	type sums struct {
		UsageRow
		timing domain.Timing
		waits  time.Duration
		waited int
	}
	by := map[key]*sums{}
	for _, r := range rows {
		k := key{r.Owner, r.Queue}
		s := by[k]
		if s == nil {
			s = &sums{UsageRow: UsageRow{Owner: r.Owner, Queue: r.Queue}}
			by[k] = s
		}
		s.Jobs++
		s.GPUHours += r.GPUHours
		s.timing.Compute += r.Timing.Compute
		s.timing.SchedLatency += r.Timing.SchedLatency
		s.timing.Drain += r.Timing.Drain
		if r.Timing.GangWait > 0 {
			s.waits += r.Timing.GangWait
			s.waited++
		}
	}
	out := make([]UsageRow, 0, len(by))
	for _, s := range by {
		u := s.UsageRow
		u.Efficiency = s.timing.Efficiency()
		if s.waited > 0 {
			u.MeanGangWait = s.waits / time.Duration(s.waited)
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b UsageRow) int {
		return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Queue, b.Queue))
	})
	return out
}
