package lifecycle

import (
	"maps"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// ReconcileInput is what one reconciler pass observed. The allocations,
// claims and assignments are listed at one etcd revision; Active is taken
// after that listing (as a read per allocation would be).
type ReconcileInput struct {
	Allocs    []domain.Allocation        // alloc/<job> values that decoded, in listing order
	Malformed map[string]error           // by job: alloc/<job> values that cannot be used, and why
	Claims    []domain.Claim             // values of the claims and port claims (JobID "" if undecodable)
	Assigns   []AssignKey                // the assignment keys
	Up        map[string]bool            // nodes with a liveness key
	Active    map[string]domain.JobBrief // the unfinished job records as the watch has them, by job
	Now       time.Time
}

// Reconcile decides one reconciler pass: the actions that repair what a
// crash or a missed watch event left behind, in the order to apply them
// (see the package doc).
func Reconcile(in ReconcileInput) []Action {
	var out []Action
	held := make(map[string]domain.Allocation, len(in.Allocs))
	for _, a := range in.Allocs {
		held[a.JobID] = a
		job, found := in.Active[a.JobID]
		if !found || job.Attempt != a.Attempt {
			out = append(out, ConfirmAllocation{Alloc: a})
			continue
		}
		if act := JudgeAllocation(a, job, true, in.Up, in.Now); act != nil {
			out = append(out, act)
		}
	}
	// Work goes in job order, so that a plan is a function of its input
	// (map order is not).
	for _, id := range slices.Sorted(maps.Keys(in.Active)) {
		if act := judgeUnheld(in.Active[id], held); act != nil {
			out = append(out, act)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(in.Malformed)) {
		out = append(out, DropMalformed{JobID: id, Why: in.Malformed[id]})
	}
	for _, id := range StrayJobs(held, in.Malformed, in.Claims, in.Assigns) {
		_, hasAlloc := held[id]
		job, found := in.Active[id]
		if !found {
			out = append(out, ConfirmStrays{JobID: id, HasAlloc: hasAlloc})
			continue
		}
		if act := JudgeStrays(id, job, true, hasAlloc); act != nil {
			out = append(out, act)
		}
	}
	return out
}

// StaleReadWindow is how long a job record read may lag what it should
// show: a jobs-KV get is a JetStream direct get, which any replica may
// answer, with no read-after-write promise (nats-io/nats.docs#815,
// nats-server#6557).
const StaleReadWindow = 10 * time.Second

// JudgeAllocation decides what to do with allocation a given its job's
// record (found false: there is none). nil means leave it alone.
func JudgeAllocation(a domain.Allocation, job domain.JobBrief, found bool, up map[string]bool, now time.Time) Action {
	switch {
	case found && job.Attempt < a.Attempt, !found && now.Sub(a.ReservedAt) < StaleReadWindow:
		// An allocation of a later attempt than its record says, or a
		// fresh one whose record is missing: the read is stale (a KV get
		// any replica may answer). Releasing is final; a later pass reads
		// again.
		return nil
	case !found || job.State.Terminal() || job.Attempt != a.Attempt:
		return Release{JobID: a.JobID, Attempt: a.Attempt}
	case pulling(a):
		// Pulling: the pull deadline, not the launch one, applies (the
		// launch timeout starts after the pull).
		if v := JudgePull(a, nil, now); v.Step == PullFail {
			return FailPull{Alloc: a, Reason: v.Reason}
		}
		if job.State == domain.StatePending {
			return nil
		}
	case launchLate(a, now):
		return LaunchTimeout{Alloc: a}
	case job.State == domain.StatePending:
		// The same attempt, still pending: a replica committed the
		// reservation and is about to record it on the job (or crashed
		// in between: the redelivered proposal finishes it, its lease
		// or the launch deadline ends it). Releasing it here would
		// kill a gang that is starting.
		return nil
	}
	for _, np := range a.Placement.Nodes {
		if !up[np.Node] {
			return Requeue{Alloc: a, Reason: NodeLostReason(np.Node)}
		}
	}
	if job.State == domain.StateReserved && a.State == domain.AllocRunning {
		// Past the launch barrier but never recorded as running (a crash
		// between the two): record it now.
		return AnnounceRunning{Alloc: a}
	}
	return nil
}

// judgeUnheld requeues an active job whose attempt holds no allocation.
func judgeUnheld(j domain.JobBrief, held map[string]domain.Allocation) Action {
	if !j.State.Active() {
		return nil
	}
	if a, ok := held[j.ID]; ok && a.Attempt == j.Attempt {
		return nil
	}
	reason := "reservation lost: its lease expired before every rank was running"
	if j.State == domain.StateRunning {
		// A running gang's keys outlive every lease: its record was
		// deleted by hand. The requeue sweeps what the record named.
		reason = "allocation record of the running gang is gone; its claims and assignments were released"
	}
	return RequeueUnlessHeld{Alloc: domain.Allocation{JobID: j.ID, Attempt: j.Attempt, TraceParent: j.TraceParent}, Reason: reason}
}

// NodeLost decides what the registration epoch of node going down costs: a
// requeue of every gang with a rank on it that was reserved on that
// registration. A gang reserved on a later one (the agent came back before
// this was seen) runs on a live node; one recording no epoch for the node
// is counted as on it.
func NodeLost(allocs []domain.Allocation, node string, epoch int64) []Requeue {
	var out []Requeue
	for _, a := range allocs {
		if e, ok := a.NodeEpochs[node]; ok && e != epoch {
			continue
		}
		if a.Placement.Places(node) {
			out = append(out, Requeue{Alloc: a, Reason: NodeLostReason(node)})
		}
	}
	return out
}

// NodeLostReason is the requeue reason of a gang that lost node.
func NodeLostReason(node string) string { return "node " + node + " lost" }

// StillDue says whether a deadline action a pass decided from its listing
// (LaunchTimeout, FailPull) still holds for the allocation as read again
// now: a report may have passed the launch barrier, or ended the pull,
// since the listing, and releasing a gang that started on time is final.
// Any other action is not a deadline's, and is left as decided.
func StillDue(act Action, fresh domain.Allocation, now time.Time) bool {
	switch act := act.(type) {
	case LaunchTimeout:
		return fresh.Attempt == act.Alloc.Attempt && !pulling(fresh) && launchLate(fresh, now)
	case FailPull:
		return fresh.Attempt == act.Alloc.Attempt && pulling(fresh) && JudgePull(fresh, nil, now).Step == PullFail
	}
	return true
}

// pulling: a reserved gang whose nodes are still making its image present.
func pulling(a domain.Allocation) bool {
	return a.State == domain.AllocReserved && a.Pull.Pending()
}

// launchLate: a reserved gang past its launch deadline (JudgeAllocation
// asks it of a gang not pulling).
func launchLate(a domain.Allocation, now time.Time) bool {
	return a.State == domain.AllocReserved && now.After(a.LaunchDeadline)
}
