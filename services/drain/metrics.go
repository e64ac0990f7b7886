package drain

import (
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// clusterState feeds the cluster gauges (GPUs per leaf switch, running
// gangs, nodes up and down, η of the active jobs) from the watch caches
// every drain replica keeps anyway.
func (s *service) clusterState() telemetry.ClusterState {
	var st telemetry.ClusterState
	live := s.live.Snapshot()
	leafOf := map[string]string{}
	gpus := map[string]*telemetry.LeafGPUs{}
	var leaves []string
	for _, n := range s.inventory.Snapshot() {
		leaf := n.Leaf
		if leaf == "" {
			leaf = "none"
		}
		leafOf[n.Name] = leaf
		if gpus[leaf] == nil {
			gpus[leaf] = &telemetry.LeafGPUs{Leaf: leaf}
			leaves = append(leaves, leaf)
		}
		gpus[leaf].Total += n.GPUs
		if _, up := live[store.NodeKey(n.Name)]; up {
			st.NodesUp++
		} else {
			st.NodesDown++
		}
	}
	for _, n := range live {
		if l := gpus[leafOf[n.Name]]; l != nil {
			l.Unhealthy += len(n.Unhealthy)
		}
	}
	for _, a := range s.allocs.Snapshot() {
		if a.State == domain.AllocRunning {
			st.RunningGangs++
		}
		for _, np := range a.Placement.Nodes {
			if l := gpus[leafOf[np.Node]]; l != nil {
				l.Allocated += len(np.GPUs)
			}
		}
	}
	for _, leaf := range leaves {
		st.Leaves = append(st.Leaves, *gpus[leaf])
	}
	// Cluster η as `lockstep stats` computes it (Σ compute / Σ (compute +
	// scheduling + pull + drain) over every job), plus the running intervals so
	// far, so that the gauge moves while gangs run.
	now := s.cfg.Now()
	s.running.mu.Lock()
	sum := s.running.endedTiming
	for _, j := range s.running.jobs {
		sum = sum.Plus(j.Timing)
		if j.State == domain.StateRunning && j.Drain == nil && !j.RunningAt.IsZero() {
			sum.Compute += max(now.Sub(j.RunningAt), 0)
		}
	}
	s.running.mu.Unlock()
	if sum.Compute > 0 {
		st.Efficiency, st.HasEfficiency = sum.Efficiency(), true
	}
	return st
}
