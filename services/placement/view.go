package placement

import (
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// view is placement's picture of the cluster, kept current from the
// caches' change callbacks instead of rebuilt from them every cycle:
// claims, port claims and the cores of allocated ranks are applied as they
// change, and only the nodes they touch are recomputed. The node set
// (registrations, inventory, drain state) changes rarely; when it does the
// whole snapshot is rebuilt, and its placement index with it. Every cycle
// gets a clone, which shares the index, so the index (the switch tree from
// 1,000 nodes' labels) is built once per node set, not once per cycle.
type view struct {
	mu sync.Mutex
	// usedGPUs holds, per node, the GPU indices with a claim.
	usedGPUs map[string]map[int]bool
	// cpus holds, per node and job, the cores the job's ranks hold there.
	cpus map[string]map[string][]int
	// ports holds the claimed MASTER_PORTs per address.
	ports map[string]map[int]bool
	// dirty names the nodes changed since base was last brought up to date.
	dirty      map[string]bool
	portsDirty bool

	base *place.Snapshot
	pos  map[string]int // node name -> index in base.Nodes
	gens [3]uint64      // nodes, inventory and node-state generations base was built at
}

func newView() *view {
	return &view{
		usedGPUs: map[string]map[int]bool{},
		cpus:     map[string]map[string][]int{},
		ports:    map[string]map[int]bool{},
		dirty:    map[string]bool{},
	}
}

// claimChanged applies a change of claims/<node>/<gpu>.
func (v *view) claimChanged(key string, val *domain.Claim) {
	node, gpu, ok := store.ParseClaimKey(key)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	mark(v.usedGPUs, node, gpu, val != nil)
	v.dirty[node] = true
}

// portChanged applies a change of ports/<addr>/<port>.
func (v *view) portChanged(key string, val *domain.Claim) {
	addr, port, ok := store.ParsePortKey(key)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	mark(v.ports, addr, port, val != nil)
	v.portsDirty = true
}

// mark adds (on) or removes i in set[key], keeping no empty inner set:
// the view's maps of claimed GPUs and ports hold only what is claimed.
func mark(set map[string]map[int]bool, key string, i int, on bool) {
	switch {
	case on && set[key] == nil:
		set[key] = map[int]bool{i: true}
	case on:
		set[key][i] = true
	default:
		delete(set[key], i)
		if len(set[key]) == 0 {
			delete(set, key)
		}
	}
}

// allocChanged applies a change of alloc/<job>: the cores its ranks hold.
func (v *view) allocChanged(val, prev *domain.Allocation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if prev != nil {
		for _, np := range prev.Placement.Nodes {
			if jobs := v.cpus[np.Node]; jobs != nil {
				if _, ok := jobs[prev.JobID]; ok {
					delete(jobs, prev.JobID)
					v.dirty[np.Node] = true
				}
				if len(jobs) == 0 {
					delete(v.cpus, np.Node)
				}
			}
		}
	}
	if val == nil {
		return
	}
	for _, np := range val.Placement.Nodes {
		var cores []int
		for _, r := range np.Ranks {
			cores = append(cores, r.CPUs...)
		}
		if len(cores) == 0 {
			continue
		}
		if v.cpus[np.Node] == nil {
			v.cpus[np.Node] = map[string][]int{}
		}
		v.cpus[np.Node][val.JobID] = cores
		v.dirty[np.Node] = true
	}
}

// snapshot returns placement's view for one cycle: every inventoried node,
// up when its liveness key exists, drained when an operator said so, with
// claimed GPUs and the cores of running ranks removed. The caller owns
// the result.
func (s *scheduler) snapshot() *place.Snapshot {
	gens := [3]uint64{s.nodes.Generation(), s.inventory.Generation(), s.nodeState.Generation()}
	return s.view.snapshot(s.cfg, gens, func() (live, inv map[string]domain.Node, states map[string]domain.NodeState) {
		return s.nodes.Snapshot(), s.inventory.Snapshot(), s.nodeState.Snapshot()
	})
}

// snapshot brings the view up to date and returns a clone of it. gens are
// the node caches' generations; nodes reads those caches, and is called
// only when gens differ from the last call's.
func (v *view) snapshot(cfg Config, gens [3]uint64,
	nodes func() (live, inv map[string]domain.Node, states map[string]domain.NodeState)) *place.Snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.base == nil || gens != v.gens {
		live, inv, states := nodes()
		v.rebuild(cfg, live, inv, states)
		v.gens = gens
	} else {
		for node := range v.dirty {
			if i, ok := v.pos[node]; ok {
				v.refresh(&v.base.Nodes[i])
			}
		}
		if v.portsDirty {
			v.base.UsedPorts = v.usedPorts()
		}
	}
	clear(v.dirty)
	v.portsDirty = false
	return v.base.Clone()
}

// rebuild makes base anew from the node caches and the tracked use, and
// builds its placement index once for all the cycles until the next
// rebuild.
func (v *view) rebuild(cfg Config, live, inv map[string]domain.Node, states map[string]domain.NodeState) {
	snap := &place.Snapshot{
		Topology:  cfg.Topology,
		UsedPorts: v.usedPorts(),
		PortBase:  store.MasterPortBase, PortCount: store.MasterPortCount,
	}
	seen := map[string]bool{}
	add := func(n domain.Node, up bool) {
		if seen[n.Name] {
			return
		}
		seen[n.Name] = true
		nv := place.NodeView{Node: n, Up: up, Drained: states[store.NodeStateKey(n.Name)].Drained}
		v.refresh(&nv)
		snap.Nodes = append(snap.Nodes, nv)
	}
	for _, n := range live {
		add(n, true)
	}
	for _, n := range inv {
		add(n, false)
	}
	snap.Sort()
	v.pos = make(map[string]int, len(snap.Nodes))
	for i := range snap.Nodes {
		v.pos[snap.Nodes[i].Node.Name] = i
	}
	// Errors (contradicting labels) are Place's to report, per decision.
	_ = snap.Prepare()
	v.base = snap
}

// refresh recomputes one node's free GPUs and cores from the tracked use.
func (v *view) refresh(nv *place.NodeView) {
	n := nv.Node
	used := v.usedGPUs[n.Name]
	nv.Free = place.FreeGPUs(n, used)
	nv.FreeCPUs = nil
	jobs := v.cpus[n.Name]
	if len(jobs) == 0 {
		return
	}
	taken := map[int]bool{}
	for _, cores := range jobs {
		for _, c := range cores {
			taken[c] = true
		}
	}
	// The node's own core lists, not 0..CPUs-1: a discovered node's cores
	// may have gaps (its agent's cpuset), and a core that does not exist
	// must never be given out.
	nv.FreeCPUs = []int{}
	for _, c := range place.NodeCPUs(n) {
		if !taken[c] {
			nv.FreeCPUs = append(nv.FreeCPUs, c)
		}
	}
}

func (v *view) usedPorts() map[string]map[int]bool {
	out := make(map[string]map[int]bool, len(v.ports))
	for addr, ports := range v.ports {
		out[addr] = make(map[int]bool, len(ports))
		for p := range ports {
			out[addr][p] = true
		}
	}
	return out
}
