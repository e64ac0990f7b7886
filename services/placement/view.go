package placement

import (
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/placement"
	"github.com/lockstep-dev/lockstep/shared/store"
)

// snapshot builds placement's view: every inventoried node, up when its
// liveness key exists, drained when an operator said so, with claimed GPUs
// and the cores of running ranks removed.
func (s *scheduler) snapshot() *placement.Snapshot {
	live := s.nodes.Snapshot()
	inv := s.inventory.Snapshot()
	states := s.nodeState.Snapshot()
	used := map[string]map[int]bool{}
	for key := range s.claims.Snapshot() {
		if node, gpu, ok := store.ParseClaimKey(key); ok {
			if used[node] == nil {
				used[node] = map[int]bool{}
			}
			used[node][gpu] = true
		}
	}
	usedCPUs := map[string]map[int]bool{}
	for _, a := range s.allocs.Snapshot() {
		for _, np := range a.Placement.Nodes {
			for _, r := range np.Ranks {
				for _, c := range r.CPUs {
					if usedCPUs[np.Node] == nil {
						usedCPUs[np.Node] = map[int]bool{}
					}
					usedCPUs[np.Node][c] = true
				}
			}
		}
	}
	snap := &placement.Snapshot{
		Topology:  s.cfg.Topology,
		UsedPorts: map[string]map[int]bool{},
		PortBase:  store.MasterPortBase, PortCount: store.MasterPortCount,
	}
	for key := range s.ports.Snapshot() {
		if addr, port, ok := store.ParsePortKey(key); ok {
			if snap.UsedPorts[addr] == nil {
				snap.UsedPorts[addr] = map[int]bool{}
			}
			snap.UsedPorts[addr][port] = true
		}
	}
	seen := map[string]bool{}
	add := func(n domain.Node, up bool) {
		if seen[n.Name] {
			return
		}
		seen[n.Name] = true
		nv := placement.NodeView{Node: n, Up: up, Drained: states[store.NodeStateKey(n.Name)].Drained}
		for g := 0; g < n.GPUs; g++ {
			if !used[n.Name][g] {
				nv.Free = append(nv.Free, g)
			}
		}
		if uc := usedCPUs[n.Name]; len(uc) > 0 {
			nv.FreeCPUs = []int{}
			for c := 0; c < n.CPUs; c++ {
				if !uc[c] {
					nv.FreeCPUs = append(nv.FreeCPUs, c)
				}
			}
		}
		snap.Nodes = append(snap.Nodes, nv)
	}
	for _, n := range live {
		add(n, true)
	}
	for _, n := range inv {
		add(n, false)
	}
	snap.Sort()
	return snap
}
