package drain

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// allocationOf looks up a job's allocation by job ID: drain's cache
// decodes an allocation only when it is read (store.LazyCache), so the
// decisions below read only those they need.
type allocationOf func(jobID string) (domain.Allocation, bool)

// dueDrains decides, purely, which running gangs must start draining now:
// those past their time limit, those with a rank on a drained node and
// those with a rank on a GPU withdrawn by the node's health checks (live
// holds the registrations, by node key). Allocations are read only while
// some node is drained or has a GPU withdrawn.
func dueDrains(running []domain.Job, alloc allocationOf, nodes map[string]domain.NodeState, live map[string]domain.Node, now time.Time) []domain.DrainRequest {
	var out []domain.DrainRequest
	due := map[string]bool{}
	anyDrained := false
	for _, st := range nodes {
		anyDrained = anyDrained || st.Drained
	}
	for _, j := range running {
		if j.State != domain.StateRunning || j.Drain != nil {
			continue
		}
		if limit := j.Spec.TimeLimit.Duration(); limit > 0 && !now.Before(j.RunningAt.Add(limit)) {
			then := domain.ThenTimeout
			if j.Spec.RestartPolicy.RequeueOnTimeLimit {
				then = domain.ThenRequeue
			}
			out = append(out, domain.DrainRequest{JobID: j.ID, Kind: domain.DrainTimeLimit, Then: then,
				Reason: fmt.Sprintf("time limit of %s reached", limit)})
			due[j.ID] = true
			continue
		}
		if !anyDrained {
			continue
		}
		a, ok := alloc(j.ID)
		if !ok || a.Attempt != j.Attempt {
			continue
		}
		for _, np := range a.Placement.Nodes {
			if st, ok := nodes[store.NodeStateKey(np.Node)]; ok && st.Drained {
				out = append(out, domain.DrainRequest{JobID: j.ID, Kind: domain.DrainNode, Then: domain.ThenRequeue,
					Reason: domain.BoundReason(fmt.Sprintf("node %s drained: %s", np.Node, st.Reason))})
				due[j.ID] = true
				break
			}
		}
	}
	// The registrations are keyed by node key; the decision wants node
	// names, and the running gangs' allocations by job ID.
	byName := make(map[string]domain.Node, len(live))
	for _, n := range live {
		if len(n.Unhealthy) > 0 {
			byName[n.Name] = n
		}
	}
	if len(byName) == 0 {
		return sorted(out)
	}
	byJob := make(map[string]domain.Allocation, len(running))
	for _, j := range running {
		if a, ok := alloc(j.ID); ok && j.State == domain.StateRunning && j.Drain == nil {
			byJob[j.ID] = a
		}
	}
	for _, req := range lifecycle.GPUDrains(running, byJob, byName) {
		if !due[req.JobID] {
			out = append(out, req)
		}
	}
	return sorted(out)
}

func sorted(reqs []domain.DrainRequest) []domain.DrainRequest {
	sort.Slice(reqs, func(a, b int) bool { return reqs[a].JobID < reqs[b].JobID })
	return reqs
}

// orphanAfter is how long a drain may stand in a job record without its
// drain record before the watch loop writes the record: startDrain writes
// both within milliseconds, so only a replica that stopped between them
// leaves one that old.
const orphanAfter = 5 * time.Second

// orphan names a drain to take again: the drain of the job's attempt
// requested at RequestedAt (the job record's), should it still be there.
type orphan struct {
	JobID       string
	Attempt     int
	RequestedAt time.Time
}

// orphanedDrains decides, purely, which drains to take again: running
// gangs whose record says draining while no drain record exists, since
// orphanAfter, and whose attempt still holds its allocation. Without a
// drain record no agent signals the ranks and nothing ends the drain, and
// gang leaves the ranks' exits to it: the job would stay running for
// ever. drains is keyed by etcd key.
func orphanedDrains(running []domain.Job, drains map[string]domain.DrainRecord, alloc allocationOf, now time.Time) []orphan {
	var out []orphan
	for _, j := range running {
		if j.State != domain.StateRunning || j.Drain == nil || now.Sub(j.Drain.RequestedAt) < orphanAfter {
			continue
		}
		if _, ok := drains[store.DrainKey(j.ID)]; ok {
			continue
		}
		if a, ok := alloc(j.ID); !ok || a.Attempt != j.Attempt {
			continue
		}
		out = append(out, orphan{JobID: j.ID, Attempt: j.Attempt, RequestedAt: j.Drain.RequestedAt})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].JobID < out[b].JobID })
	return out
}
