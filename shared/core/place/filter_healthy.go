package place

import "github.com/lockstep-dev/lockstep/shared/contract/domain"

// healthyFilter rejects nodes that lack the free GPUs because the agent's
// health checks withdrew some (domain.Node.Unhealthy), so the explanation
// says so rather than "fewer than 8 free GPUs". A withdrawn GPU is never in
// NodeView.Free (FreeGPUs, Release); a node whose Free still lists one (a
// snapshot built some other way) is rejected outright rather than risk
// placing a rank on a broken GPU. In capacity mode it passes: a withdrawal
// lasts until an operator resumes the node, not for ever.
type healthyFilter struct{}

func (healthyFilter) Name() string { return filterHealthy }

func (healthyFilter) Filter(cs *cycleState, i int) bool {
	nv := &cs.snap.Nodes[i]
	if cs.capacity || len(nv.Node.Unhealthy) == 0 {
		return true
	}
	for _, g := range nv.Free {
		if withdrawn(nv.Node, g) {
			return false
		}
	}
	return len(nv.Free) >= cs.req.GPUsPerNode || len(nv.Free)+len(nv.Node.Unhealthy) < cs.req.GPUsPerNode
}

func (healthyFilter) Reason(*cycleState) string { return "short of GPUs withdrawn by health checks" }

// withdrawn reports whether health checks withdrew GPU g of n (a pointer:
// the filter asks for every free GPU of every node it looks at).
func withdrawn(n *domain.Node, g int) bool {
	for _, f := range n.Unhealthy {
		if f.GPU == g {
			return true
		}
	}
	return false
}

// FreeGPUs lists n's GPUs that may take work, ascending: neither used nor
// withdrawn by health checks. Whoever builds a Snapshot fills
// NodeView.Free with it.
func FreeGPUs(n domain.Node, used map[int]bool) []int {
	out := make([]int, 0, n.GPUs)
	for g := 0; g < n.GPUs; g++ {
		if !used[g] && !withdrawn(&n, g) {
			out = append(out, g)
		}
	}
	return out
}
