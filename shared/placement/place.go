package placement

import (
	"fmt"
	"sort"

	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/jobspec"
)

// Code says whether a gang was placed, and if not, whether waiting helps.
type Code string

const (
	// Placed: Result.Placement is valid.
	Placed Code = "Placed"
	// Wait: the gang fits the cluster but not its free GPUs now.
	Wait Code = "Wait"
	// Unschedulable: the gang can never fit this cluster.
	Unschedulable Code = "Unschedulable"
)

// Request is the part of a job placement needs.
type Request struct {
	JobID        string `json:"jobId"`
	Nodes        int    `json:"nodes"`
	GPUsPerNode  int    `json:"gpusPerNode"`
	TasksPerNode int    `json:"tasksPerNode"`
	CPUsPerTask  int    `json:"cpusPerTask,omitempty"`
}

// RequestFor extracts a Request from a spec.
func RequestFor(jobID string, s jobspec.Spec) Request {
	return Request{
		JobID:        jobID,
		Nodes:        s.Gang.Nodes,
		GPUsPerNode:  s.Gang.GPUsPerNode,
		TasksPerNode: s.Gang.TasksPerNode,
		CPUsPerTask:  s.Gang.CPUsPerTask,
	}
}

// Result is a decision with its explanation.
type Result struct {
	Code      Code              `json:"code"`
	Placement *domain.Placement `json:"placement,omitempty"`
	// Reason explains Wait and Unschedulable in numbers.
	Reason string `json:"reason,omitempty"`
}

// Place chooses nodes and GPU indices for a gang on snap. It prefers the
// fewest leaf switches, and among those, leaves already partly used
// (best fit), keeping whole leaves free for big gangs. The same snapshot and
// request always give the same answer.
func Place(snap *Snapshot, req Request) Result {
	if req.Nodes <= 0 || req.GPUsPerNode <= 0 || req.TasksPerNode <= 0 {
		return Result{Code: Unschedulable, Reason: "gang has no GPUs"}
	}
	fitTotal, fitNow := 0, 0
	var candidates []NodeView
	for _, nv := range snap.Nodes {
		if nv.Node.GPUs >= req.GPUsPerNode {
			fitTotal++
		}
		if nv.Up && len(nv.Free) >= req.GPUsPerNode {
			fitNow++
			candidates = append(candidates, nv)
		}
	}
	if fitTotal < req.Nodes {
		return Result{Code: Unschedulable, Reason: fmt.Sprintf(
			"needs %d nodes with %d GPUs; the cluster has %d such nodes", req.Nodes, req.GPUsPerNode, fitTotal)}
	}
	if fitNow < req.Nodes {
		return Result{Code: Wait, Reason: fmt.Sprintf(
			"%s: needs %d nodes with %d free GPUs; %d have them now", domain.ReasonResources, req.Nodes, req.GPUsPerNode, fitNow)}
	}
	chosen := chooseNodes(candidates, req)
	port, ok := freePort(snap, chosen[0].Node.Addr)
	if !ok {
		return Result{Code: Wait, Reason: fmt.Sprintf("%s: no free MASTER_PORT on %s", domain.ReasonResources, chosen[0].Node.Addr)}
	}
	p := build(chosen, req, port)
	return Result{Code: Placed, Placement: &p}
}

// chooseNodes groups candidates by leaf and fills the gang from as few
// leaves as possible: first the single leaf that fits with the least room
// to spare, else leaves in order of most fitting nodes.
func chooseNodes(cands []NodeView, req Request) []NodeView {
	byLeaf := map[string][]NodeView{}
	var leaves []string
	for _, nv := range cands {
		if _, ok := byLeaf[nv.Node.Leaf]; !ok {
			leaves = append(leaves, nv.Node.Leaf)
		}
		byLeaf[nv.Node.Leaf] = append(byLeaf[nv.Node.Leaf], nv)
	}
	// Within a leaf, prefer nodes with the fewest free GPUs (best fit).
	for _, l := range leaves {
		ns := byLeaf[l]
		sort.SliceStable(ns, func(i, j int) bool {
			if len(ns[i].Free) != len(ns[j].Free) {
				return len(ns[i].Free) < len(ns[j].Free)
			}
			return ns[i].Node.Name < ns[j].Node.Name
		})
	}
	best := ""
	for _, l := range leaves {
		if len(byLeaf[l]) >= req.Nodes && (best == "" || len(byLeaf[l]) < len(byLeaf[best]) ||
			(len(byLeaf[l]) == len(byLeaf[best]) && l < best)) {
			best = l
		}
	}
	if best != "" {
		return byLeaf[best][:req.Nodes]
	}
	sort.SliceStable(leaves, func(i, j int) bool {
		if len(byLeaf[leaves[i]]) != len(byLeaf[leaves[j]]) {
			return len(byLeaf[leaves[i]]) > len(byLeaf[leaves[j]])
		}
		return leaves[i] < leaves[j]
	})
	var out []NodeView
	for _, l := range leaves {
		for _, nv := range byLeaf[l] {
			if len(out) == req.Nodes {
				return out
			}
			out = append(out, nv)
		}
	}
	return out
}

// build assigns GPU indices and ranks: node rank follows the chosen order,
// ranks are dense, each rank gets GPUsPerNode/TasksPerNode GPUs.
func build(nodes []NodeView, req Request, port int) domain.Placement {
	per := req.GPUsPerNode / req.TasksPerNode
	p := domain.Placement{MasterAddr: nodes[0].Node.Addr, MasterPort: port}
	leafSeen := map[string]bool{}
	rank := 0
	for i, nv := range nodes {
		gpus := append([]int(nil), nv.Free[:req.GPUsPerNode]...)
		np := domain.NodePlacement{Node: nv.Node.Name, NodeRank: i, GPUs: gpus}
		for local := 0; local < req.TasksPerNode; local++ {
			np.Ranks = append(np.Ranks, domain.Rank{
				Rank: rank, LocalRank: local, GPUs: append([]int(nil), gpus[local*per:(local+1)*per]...),
			})
			rank++
		}
		p.Nodes = append(p.Nodes, np)
		if !leafSeen[nv.Node.Leaf] {
			leafSeen[nv.Node.Leaf] = true
			p.Leaves = append(p.Leaves, nv.Node.Leaf)
		}
	}
	return p
}

func freePort(snap *Snapshot, addr string) (int, bool) {
	base, count := snap.PortBase, snap.PortCount
	used := snap.UsedPorts[addr]
	for p := base; p < base+count; p++ {
		if !used[p] {
			return p, true
		}
	}
	return 0, false
}
