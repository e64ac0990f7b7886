package drain

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// dueDrains decides, purely, which running gangs must start draining now:
// those past their time limit and those with a rank on a drained node.
func dueDrains(running []domain.Job, allocs map[string]domain.Allocation, nodes map[string]domain.NodeState, now time.Time) []domain.DrainRequest {
	var out []domain.DrainRequest
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
			continue
		}
		a, ok := allocs[store.AllocKey(j.ID)]
		if !ok || a.Attempt != j.Attempt {
			continue
		}
		for _, np := range a.Placement.Nodes {
			if st, ok := nodes[store.NodeStateKey(np.Node)]; ok && st.Drained {
				out = append(out, domain.DrainRequest{JobID: j.ID, Kind: domain.DrainNode, Then: domain.ThenRequeue,
					Reason: fmt.Sprintf("node %s drained: %s", np.Node, st.Reason)})
				break
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].JobID < out[b].JobID })
	return out
}
