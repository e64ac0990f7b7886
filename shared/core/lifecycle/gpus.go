package lifecycle

import (
	"fmt"
	"sort"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// GPUDrains decides which running gangs must be checkpoint-drained and
// requeued because a rank of theirs is on a GPU its node's health checks
// withdrew (domain.Node.Unhealthy). allocs holds each job's allocation by
// job ID, nodes each live registration by node name: the registration is
// the authority on which GPUs are withdrawn. A job already draining, not
// running, or whose allocation is of another attempt is left alone; so is a
// node that is not registered (its gangs are requeued as on node loss).
// The requests come sorted by job ID.
func GPUDrains(running []domain.Job, allocs map[string]domain.Allocation, nodes map[string]domain.Node) []domain.DrainRequest {
	var out []domain.DrainRequest
	for _, j := range running {
		if j.State != domain.StateRunning || j.Drain != nil {
			continue
		}
		a, ok := allocs[j.ID]
		if !ok || a.Attempt != j.Attempt {
			continue
		}
		if why, hit := onWithdrawnGPU(a, nodes); hit {
			out = append(out, domain.DrainRequest{JobID: j.ID, Kind: domain.DrainNode, Then: domain.ThenRequeue, Reason: why})
		}
	}
	sort.Slice(out, func(x, y int) bool { return out[x].JobID < out[y].JobID })
	return out
}

// onWithdrawnGPU names the first withdrawn GPU the allocation uses, in
// placement order.
func onWithdrawnGPU(a domain.Allocation, nodes map[string]domain.Node) (string, bool) {
	for _, np := range a.Placement.Nodes {
		n, ok := nodes[np.Node]
		if !ok || len(n.Unhealthy) == 0 {
			continue
		}
		for _, g := range np.GPUs {
			for _, f := range n.Unhealthy {
				if f.GPU == g {
					return domain.BoundReason(fmt.Sprintf("GPU %d of node %s withdrawn: %s", g, np.Node, f.Reason)), true
				}
			}
		}
	}
	return "", false
}
