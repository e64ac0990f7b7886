package queue

// Preemptor picks the job that may preempt after a plan: the
// highest-priority job (the first in plan order among equals) waiting for
// resources (Resources or Reserved) whose start would keep its queue
// within quota and its owner within their GPU limits, counting the
// running jobs and every start of plan. A job that waits for policy
// (QuotaExceeded, UserGPULimit) never preempts, and neither does one that
// passed the check only because it came before this plan's other starts
// in its queue or of its owner: victims must never be evicted for a job
// the limits would hold anyway. The victims' own GPUs still count, so the
// check is conservative when victims share the preemptor's queue or owner.
func Preemptor(in Input, plan Plan) (PendingJob, bool) {
	jobs := make(map[string]PendingJob, len(in.Pending))
	for _, j := range in.Pending {
		jobs[j.ID] = j
	}
	quotas := newQuotas(in.Config, in.Running)
	users := newUserGPUs(in.Config, in.Running)
	for _, d := range plan.Decisions {
		if j, ok := jobs[d.JobID]; ok && d.Action == Start {
			quotas.add(j)
			users.add(j)
		}
	}
	var top PendingJob
	found := false
	for _, d := range plan.Decisions {
		if d.Action != Pending || (d.ReasonCode != ReasonResources && d.ReasonCode != ReasonReserved) {
			continue
		}
		j, ok := jobs[d.JobID]
		if !ok || (found && j.Priority <= top.Priority) {
			continue
		}
		if _, over := quotas.check(j); over {
			continue
		}
		if _, over := users.check(j); over {
			continue
		}
		top, found = j, true
	}
	return top, found
}
