package gang

import (
	"fmt"
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// fitCode says why a placement does not fit.
type fitCode int

const (
	// fits: the placement is one the job's spec asks for, on nodes that
	// are up and not drained.
	fits fitCode = iota
	// unfit: the placement is not what the spec asks for (wrong shape,
	// GPUs a node does not have, a node nobody registered). Placement
	// never proposes that: the proposal is forged or broken.
	unfit
	// unavailable: a node of the placement is down or drained, or a GPU of
	// it withdrawn by health checks. That can
	// be a race with a node going away after placement decided, so the
	// job is proposed again (recorded as a conflict).
	unavailable
)

// nodeView is what gang knows of one node of a proposal; a node with no
// view is one nobody registered.
type nodeView struct {
	// Reg is the node's registration (its inventory record while it is
	// down); Up says its agent's lease holds; Rev is the ModRevision of its
	// liveness key, for the reservation's compare.
	Reg     domain.Node
	Rev     int64
	Up      bool
	Drained bool
}

// fitStatus is the verdict of checkFit, with a reason naming the field.
type fitStatus struct {
	code   fitCode
	reason string
}

func (f fitStatus) ok() bool { return f.code == fits }

func notFit(format string, args ...any) fitStatus {
	return fitStatus{code: unfit, reason: fmt.Sprintf(format, args...)}
}

// checkFit decides, purely, whether placement p is one that job spec asks
// for on nodes as gang sees them: as many nodes as spec.Gang.Nodes, each
// named once with node ranks 0..n-1; on each, gpusPerNode distinct GPUs
// that the node's registration has and tasksPerNode ranks that split
// them, each rank's GPUs its own; ranks numbered 0..world-1 once each;
// MASTER_ADDR the address of node rank 0 and MASTER_PORT in Lockstep's
// range. Then every node must be up and not drained.
func checkFit(spec jobspec.Spec, p domain.Placement, nodes map[string]nodeView) fitStatus {
	g := spec.Gang
	if g.Nodes < 1 || g.GPUsPerNode < 1 || g.TasksPerNode < 1 || g.GPUsPerNode%g.TasksPerNode != 0 {
		return notFit("job spec gang %+v has no valid shape", g)
	}
	if len(p.Nodes) != g.Nodes {
		return notFit("placement.nodes: %d nodes, the job asks for %d", len(p.Nodes), g.Nodes)
	}
	perRank := g.GPUsPerNode / g.TasksPerNode
	seenNode := map[string]bool{}
	nodeRanks := make([]bool, len(p.Nodes))
	ranks := make([]bool, g.Nodes*g.TasksPerNode)
	for i, np := range p.Nodes {
		field := fmt.Sprintf("placement.nodes[%d]", i)
		v, known := nodes[np.Node]
		switch {
		case np.Node == "" || seenNode[np.Node]:
			return notFit("%s.node: %q is empty or repeated", field, np.Node)
		case !known:
			return notFit("%s.node: %q is not a registered node", field, np.Node)
		case np.NodeRank < 0 || np.NodeRank >= len(p.Nodes) || nodeRanks[np.NodeRank]:
			return notFit("%s.nodeRank: %d is out of range or repeated", field, np.NodeRank)
		case len(np.GPUs) != g.GPUsPerNode:
			return notFit("%s.gpus: %d GPUs, the job asks for %d per node", field, len(np.GPUs), g.GPUsPerNode)
		case len(np.Ranks) != g.TasksPerNode:
			return notFit("%s.ranks: %d ranks, the job asks for %d per node", field, len(np.Ranks), g.TasksPerNode)
		}
		seenNode[np.Node], nodeRanks[np.NodeRank] = true, true
		if st := fitNode(field, np, v.Reg, perRank, g.CPUsPerTask, ranks); !st.ok() {
			return st
		}
	}
	master := p.Nodes[slices.IndexFunc(p.Nodes, func(np domain.NodePlacement) bool { return np.NodeRank == 0 })]
	if addr := nodes[master.Node].Reg.Addr; p.MasterAddr != addr {
		return notFit("placement.masterAddr: %q is not the address of node rank 0 (%s at %q)", p.MasterAddr, master.Node, addr)
	}
	if p.MasterPort < store.MasterPortBase || p.MasterPort >= store.MasterPortBase+store.MasterPortCount {
		return notFit("placement.masterPort: %d is outside %d..%d", p.MasterPort, store.MasterPortBase, store.MasterPortBase+store.MasterPortCount-1)
	}
	// Availability last: a placement that is wrong anyway is refused as
	// such, not proposed again.
	for _, np := range p.Nodes {
		v := nodes[np.Node]
		switch {
		case !v.Up:
			return fitStatus{code: unavailable, reason: fmt.Sprintf("node %s is down", np.Node)}
		case v.Drained:
			return fitStatus{code: unavailable, reason: fmt.Sprintf("node %s is drained", np.Node)}
		}
		// The registration, not the proposal, says which GPUs health
		// checks withdrew; placement may have decided before it changed.
		withdrawn := v.Reg.WithdrawnGPUs()
		for _, gpu := range np.GPUs {
			if withdrawn[gpu] {
				return fitStatus{code: unavailable, reason: fmt.Sprintf("GPU %d of node %s is withdrawn by health checks", gpu, np.Node)}
			}
		}
	}
	return fitStatus{}
}

// fitNode checks one node's GPUs and ranks against its registration and
// marks the global ranks it holds.
func fitNode(field string, np domain.NodePlacement, reg domain.Node, perRank, cpusPerTask int, ranks []bool) fitStatus {
	gpus := map[int]bool{}
	for _, gpu := range np.GPUs {
		if gpu < 0 || gpu >= reg.GPUs || gpus[gpu] {
			return notFit("%s.gpus: GPU %d is repeated or not one of node %s's %d", field, gpu, np.Node, reg.GPUs)
		}
		gpus[gpu] = true
	}
	local := make([]bool, len(np.Ranks))
	used := map[int]bool{}
	// The node's cores as its agent reckons them (checkAssignment): the
	// agent drops, silently, an assignment naming a core that is not one
	// of them or one given to two ranks, and the gang then times out at
	// launch, at the cost of a restart. Only listed when a rank names one.
	var cores []int
	usedCores := map[int]bool{}
	for k, r := range np.Ranks {
		rf := fmt.Sprintf("%s.ranks[%d]", field, k)
		switch {
		case r.Rank < 0 || r.Rank >= len(ranks) || ranks[r.Rank]:
			return notFit("%s.rank: %d is out of range or repeated", rf, r.Rank)
		case r.LocalRank < 0 || r.LocalRank >= len(local) || local[r.LocalRank]:
			return notFit("%s.localRank: %d is out of range or repeated", rf, r.LocalRank)
		case len(r.GPUs) != perRank:
			return notFit("%s.gpus: %d GPUs, the job asks for %d per rank", rf, len(r.GPUs), perRank)
		case cpusPerTask > 0 && len(r.CPUs) != cpusPerTask:
			return notFit("%s.cpus: %d cores, the job asks for %d per rank", rf, len(r.CPUs), cpusPerTask)
		case cpusPerTask == 0 && len(r.CPUs) > 0:
			return notFit("%s.cpus: cores given, the job asks for none", rf)
		}
		ranks[r.Rank], local[r.LocalRank] = true, true
		for _, gpu := range r.GPUs {
			if !gpus[gpu] || used[gpu] {
				return notFit("%s.gpus: GPU %d is not the node's part of the gang or is shared", rf, gpu)
			}
			used[gpu] = true
		}
		for _, c := range r.CPUs {
			if cores == nil {
				cores = place.NodeCPUs(reg) // ascending
			}
			if _, ok := slices.BinarySearch(cores, c); !ok {
				return notFit("%s.cpus: core %d is not one of node %s's %d", rf, c, np.Node, len(cores))
			}
			if usedCores[c] {
				return notFit("%s.cpus: core %d is given to two ranks", rf, c)
			}
			usedCores[c] = true
		}
	}
	return fitStatus{}
}
