package placement

import (
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// view is placement's picture of the cluster, kept current from the
// caches' change callbacks instead of rebuilt from them every cycle: the
// GPUs, cores and MASTER_PORTs each allocation holds are applied as it
// changes, and only the nodes it touches are recomputed. The node set
// (registrations, inventory, drain state) changes rarely; when it does the
// whole snapshot is rebuilt, and its placement index with it. Every cycle
// gets a clone, which shares the index, so the index (the switch tree from
// 1,000 nodes' labels) is built once per node set, not once per cycle.
//
// What is taken comes from the allocations, not from the claim keys: a
// reservation's claims and its allocation are written, detached and
// deleted in the same transactions, so the records say what the keys do,
// and watching the keys as well cost a watch event per GPU three times
// over (reserved, detached, released), three quarters of all of etcd's
// events. A claim no allocation accounts for (left by a crash, or
// written by hand) is not seen here: a proposal on it fails gang's
// transaction, which names it, and the reconciler releases it. The
// records come from store.HoldingsCache, which drops only the records
// the reconciler releases as malformed, so none of them is taken for free
// while its claims stay.
type view struct {
	mu sync.Mutex
	// gpus and cpus hold, per node and job, the GPU indices and cores the
	// job's allocation holds there.
	gpus map[string]map[string][]int
	cpus map[string]map[string][]int
	// ports holds, per address and job, the job's MASTER_PORT.
	ports map[string]map[string]int
	// dirty names the nodes, and dirtyPorts the master addresses, changed
	// since base was last brought up to date.
	dirty      map[string]bool
	dirtyPorts map[string]bool

	base *place.Snapshot
	pos  map[string]int // node name -> index in base.Nodes
	gens [3]uint64      // nodes, inventory and node-state generations base was built at
}

func newView() *view {
	return &view{
		gpus:  map[string]map[string][]int{},
		cpus:  map[string]map[string][]int{},
		ports: map[string]map[string]int{},
		dirty: map[string]bool{}, dirtyPorts: map[string]bool{},
	}
}

// allocChanged applies a change of alloc/<job>: the GPUs, cores and port
// its gang holds.
func (v *view) allocChanged(val, prev *domain.Allocation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if prev != nil {
		for _, np := range prev.Placement.Nodes {
			forget(v.gpus, np.Node, prev.JobID)
			forget(v.cpus, np.Node, prev.JobID)
			v.dirty[np.Node] = true
		}
		if jobs := v.ports[prev.Placement.MasterAddr]; jobs != nil {
			delete(jobs, prev.JobID)
			if len(jobs) == 0 {
				delete(v.ports, prev.Placement.MasterAddr)
			}
			v.dirtyPorts[prev.Placement.MasterAddr] = true
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
		hold(v.gpus, np.Node, val.JobID, np.GPUs)
		hold(v.cpus, np.Node, val.JobID, cores)
		v.dirty[np.Node] = true
	}
	if addr := val.Placement.MasterAddr; addr != "" {
		if v.ports[addr] == nil {
			v.ports[addr] = map[string]int{}
		}
		v.ports[addr][val.JobID] = val.Placement.MasterPort
		v.dirtyPorts[addr] = true
	}
}

// hold records what job holds on node, if anything.
func hold(set map[string]map[string][]int, node, job string, held []int) {
	if len(held) == 0 {
		return
	}
	if set[node] == nil {
		set[node] = map[string][]int{}
	}
	set[node][job] = held
}

// forget drops what job held on node, keeping no empty inner map.
func forget(set map[string]map[string][]int, node, job string) {
	if jobs := set[node]; jobs != nil {
		delete(jobs, job)
		if len(jobs) == 0 {
			delete(set, node)
		}
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
		for addr := range v.dirtyPorts {
			v.refreshPorts(addr)
		}
	}
	clear(v.dirty)
	clear(v.dirtyPorts)
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
		nv := place.NodeView{Node: &n, Up: up, Drained: states[store.NodeStateKey(n.Name)].Drained}
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
	nv.Free = place.FreeGPUs(*n, union(v.gpus[n.Name]))
	nv.FreeCPUs = nil
	jobs := v.cpus[n.Name]
	if len(jobs) == 0 {
		return
	}
	taken := union(jobs)
	// The node's own core lists, not 0..CPUs-1: a discovered node's cores
	// may have gaps (its agent's cpuset), and a core that does not exist
	// must never be given out.
	nv.FreeCPUs = []int{}
	for _, c := range place.NodeCPUs(*n) {
		if !taken[c] {
			nv.FreeCPUs = append(nv.FreeCPUs, c)
		}
	}
}

func (v *view) usedPorts() map[string]map[int]bool {
	out := make(map[string]map[int]bool, len(v.ports))
	for addr, jobs := range v.ports {
		out[addr] = portSet(jobs)
	}
	return out
}

// refreshPorts recomputes one address's ports in base. The inner map is
// replaced, never changed in place: the clones of earlier cycles share it
// (place.Snapshot.Clone copies only the outer map).
func (v *view) refreshPorts(addr string) {
	if v.base.UsedPorts == nil {
		v.base.UsedPorts = map[string]map[int]bool{}
	}
	if jobs := v.ports[addr]; len(jobs) > 0 {
		v.base.UsedPorts[addr] = portSet(jobs)
	} else {
		delete(v.base.UsedPorts, addr)
	}
}

func portSet(jobs map[string]int) map[int]bool {
	out := make(map[int]bool, len(jobs))
	for _, p := range jobs {
		out[p] = true
	}
	return out
}

// union is every index some job holds (nil when none does).
func union(jobs map[string][]int) map[int]bool {
	if len(jobs) == 0 {
		return nil
	}
	out := map[int]bool{}
	for _, held := range jobs {
		for _, i := range held {
			out[i] = true
		}
	}
	return out
}
