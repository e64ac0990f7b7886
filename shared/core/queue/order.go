package queue

import (
	"cmp"
	"slices"
	"time"
)

// Order returns the pending jobs in the order the backfill policy
// considers them:
//  1. higher Priority first;
//  2. within equal priority, the queue with the lower fair-share key
//     first, where key = Usage[queue] / weight (decayed GPU-hours per unit
//     of weight; a queue with no recorded usage has key 0);
//  3. then earlier SubmittedAt plus the job-size handicap: (GPUs − 1) ×
//     Config.SizeHandicap (a day), at most Config.MaxSizeHandicap (a week)
//     and at most SizeHandicapBacklog (16) × the small-job backlog (see
//     size.go). With a backlog of days, a 1-GPU job goes ahead of an 8-GPU
//     job submitted less than a week before it, but no job ever goes ahead
//     of one submitted more than MaxSizeHandicap before it. Within one
//     size this is submission order;
//  4. then earlier SubmittedAt, queue name and job ID, so the order is
//     total.
//
// Keys are computed once per plan from Input.Usage: jobs started by the
// plan change a queue's usage only as they run, in later plans.
func Order(in Input) []PendingJob {
	key := func(q string) float64 { return in.Usage[q] / in.Config.Queue(q).weight() }
	limit := in.handicapLimit()
	eligible := func(j PendingJob) time.Time { return j.SubmittedAt.Add(in.Config.sizeHandicap(j.GPUs(), limit)) }
	out := slices.Clone(in.Pending)
	slices.SortStableFunc(out, func(a, b PendingJob) int {
		return cmp.Or(
			cmp.Compare(b.Priority, a.Priority),
			cmp.Compare(key(a.Queue), key(b.Queue)),
			eligible(a).Compare(eligible(b)),
			a.SubmittedAt.Compare(b.SubmittedAt),
			cmp.Compare(a.Queue, b.Queue),
			cmp.Compare(a.ID, b.ID),
		)
	})
	return out
}

// orderFIFO is plain priority-then-submission order, without fair share
// or the job-size factor.
func orderFIFO(in Input) []PendingJob {
	out := slices.Clone(in.Pending)
	slices.SortStableFunc(out, func(a, b PendingJob) int {
		return cmp.Or(
			cmp.Compare(b.Priority, a.Priority),
			a.SubmittedAt.Compare(b.SubmittedAt),
			cmp.Compare(a.ID, b.ID),
		)
	})
	return out
}
