package view

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Node states on the fabric page.
const (
	NodeUp      = "up"
	NodeDown    = "down"
	NodeDrained = "drained"
)

// unlabelled names the switch of a node whose agent reported none.
const unlabelled = "(none)"

// DefaultCollapseAbove is the node count above which the fabric page
// starts with every leaf switch folded to its summary line: a thousand
// nodes of eight cells each is more than a screen can show usefully.
const DefaultCollapseAbove = 64

// FabricInput is what the fabric page is built from: the etcd records the
// web service follows.
type FabricInput struct {
	// Inventory is every node ever registered (capacity known while it is
	// down); Live the nodes up now, by name.
	Inventory map[string]domain.Node
	Live      map[string]domain.Node
	// States are the operators' node drains, by node name.
	States map[string]domain.NodeState
	// Claims are the GPU claims: node → GPU index → claim.
	Claims map[string]map[int]domain.Claim
	// Jobs are the job records by ID (names and ranks for the cells).
	Jobs map[string]domain.Job
	// CollapseAbove folds the leaves when the fabric has more nodes (0:
	// DefaultCollapseAbove).
	CollapseAbove int
}

// Fabric is the switch tree, spine → leaf → node → GPU.
type Fabric struct {
	Spines []Spine
	// Totals over the whole fabric.
	Nodes, Leaves, GPUs, Free, Used, Down, Drained, Unhealthy int
	// Collapsed says the leaves start folded.
	Collapsed bool
}

// Spine is one spine switch and the leaves under it.
type Spine struct {
	Name        string
	Leaves      []Leaf
	Free, Total int
}

// Leaf is one leaf switch and its nodes.
type Leaf struct {
	// ID is unique on the page (the spine's name and the leaf's), for the
	// browser to remember which leaves are open.
	ID          string
	Name        string
	Nodes       []Node
	Free, Total int
	Down        int
	Drained     int
	// Jobs are the jobs holding GPUs under this leaf, for the folded view.
	Jobs []JobChip
}

// JobChip is a job named in a summary, with its colour.
type JobChip struct {
	ID, Color string
	GPUs      int
}

// Node is one node and its GPU cells.
type Node struct {
	Name   string
	State  string
	Reason string
	GPUs   []GPU
	Free   int
}

// GPU is one cell.
type GPU struct {
	Index int
	// JobID holds the GPU ("" when free); Color is the job's.
	JobID, Color string
	// Class is free, held, unhealthy or off (on a node down or drained).
	Class string
	// Title is the tooltip: which GPU, which job and rank, or why not usable.
	Title string
}

// BuildFabric lays out the switch tree from the nodes' labels, sorted by
// name at every level. A GPU is free when its node is up, not drained, the
// GPU is healthy and no job claims it.
func BuildFabric(in FabricInput) Fabric {
	names := make([]string, 0, len(in.Inventory)+len(in.Live))
	nodes := make(map[string]domain.Node, len(in.Inventory)+len(in.Live))
	for name, n := range in.Inventory {
		nodes[name] = n
	}
	for name, n := range in.Live { // the live registration is the current one
		nodes[name] = n
	}
	for name := range nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	limit := cmp.Or(in.CollapseAbove, DefaultCollapseAbove)
	f := Fabric{Collapsed: len(names) > limit}
	spines := map[string]*Spine{}
	leaves := map[[2]string]*Leaf{}
	ranks := rankIndex(in)
	for _, name := range names {
		n := nodes[name]
		_, up := in.Live[name]
		node := buildNode(n, up, in.States[name], in.Claims[name], in.Jobs, ranks)
		spineName, leafName := cmp.Or(n.Spine, unlabelled), cmp.Or(n.Leaf, unlabelled)
		sp := spines[spineName]
		if sp == nil {
			sp = &Spine{Name: spineName}
			spines[spineName] = sp
		}
		key := [2]string{spineName, leafName}
		lf := leaves[key]
		if lf == nil {
			lf = &Leaf{ID: "leaf:" + spineName + "/" + leafName, Name: leafName}
			leaves[key] = lf
		}
		lf.Nodes = append(lf.Nodes, node)
		lf.Free += node.Free
		lf.Total += len(node.GPUs)
		switch node.State {
		case NodeDown:
			lf.Down++
			f.Down++
		case NodeDrained:
			lf.Drained++
			f.Drained++
		}
		for _, g := range node.GPUs {
			switch g.Class {
			case "held":
				f.Used++
			case "unhealthy":
				f.Unhealthy++
			}
		}
		f.Free += node.Free
		f.GPUs += len(node.GPUs)
	}
	f.Nodes = len(names)
	for key, lf := range leaves {
		lf.Jobs = leafJobs(lf.Nodes)
		sp := spines[key[0]]
		sp.Leaves = append(sp.Leaves, *lf)
		sp.Free += lf.Free
		sp.Total += lf.Total
	}
	for _, sp := range spines {
		slices.SortFunc(sp.Leaves, func(a, b Leaf) int { return cmp.Compare(a.Name, b.Name) })
		f.Spines = append(f.Spines, *sp)
	}
	slices.SortFunc(f.Spines, func(a, b Spine) int { return cmp.Compare(a.Name, b.Name) })
	f.Leaves = len(leaves)
	return f
}

// rankKey names one GPU of one node.
type rankKey struct {
	node string
	gpu  int
}

// rankIndex maps each claimed GPU to the rank its job's placement gives
// it, when the claim is of the attempt the record describes.
func rankIndex(in FabricInput) map[rankKey]int {
	out := map[rankKey]int{}
	for node, claims := range in.Claims {
		for gpu, c := range claims {
			if r, ok := rankOn(in.Jobs[c.JobID], c.Attempt, node, gpu); ok {
				out[rankKey{node, gpu}] = r
			}
		}
	}
	return out
}

// rankOn is the rank of job j's attempt that holds gpu on node.
func rankOn(j domain.Job, attempt int, node string, gpu int) (int, bool) {
	if j.Placement == nil || j.Attempt != attempt {
		return 0, false
	}
	for _, np := range j.Placement.Nodes {
		if np.Node != node {
			continue
		}
		for _, r := range np.Ranks {
			if slices.Contains(r.GPUs, gpu) {
				return r.Rank, true
			}
		}
	}
	return 0, false
}

func buildNode(n domain.Node, up bool, st domain.NodeState, claims map[int]domain.Claim, jobs map[string]domain.Job, ranks map[rankKey]int) Node {
	node := Node{Name: n.Name, State: NodeUp}
	switch {
	case !up:
		node.State, node.Reason = NodeDown, "no live registration (agent lease expired)"
	case st.Drained:
		node.State, node.Reason = NodeDrained, st.Reason
	}
	withdrawn := map[int]string{}
	for _, f := range n.Unhealthy {
		withdrawn[f.GPU] = f.Reason
	}
	node.GPUs = make([]GPU, n.GPUs)
	for i := range node.GPUs {
		g := GPU{Index: i, Class: "free", Title: fmt.Sprintf("%s GPU %d: free", n.Name, i)}
		reason, sick := withdrawn[i]
		c, held := claims[i]
		switch {
		case held:
			g.JobID, g.Color, g.Class = c.JobID, JobColor(c.JobID), "held"
			g.Title = fmt.Sprintf("%s GPU %d: job %s", n.Name, i, c.JobID)
			if j, ok := jobs[c.JobID]; ok && j.Spec.Name != "" {
				g.Title += " (" + j.Spec.Name + ")"
			}
			if r, ok := ranks[rankKey{n.Name, i}]; ok {
				g.Title += fmt.Sprintf(", rank %d", r)
			}
		case sick:
			g.Class, g.Title = "unhealthy", fmt.Sprintf("%s GPU %d: unhealthy: %s", n.Name, i, reason)
		case node.State != NodeUp:
			g.Class, g.Title = "off", fmt.Sprintf("%s GPU %d: node %s", n.Name, i, node.State)
		default:
			node.Free++
		}
		node.GPUs[i] = g
	}
	return node
}

// leafJobs lists the jobs on a leaf's nodes, most GPUs first.
func leafJobs(nodes []Node) []JobChip {
	count := map[string]int{}
	for _, n := range nodes {
		for _, g := range n.GPUs {
			if g.JobID != "" {
				count[g.JobID]++
			}
		}
	}
	out := make([]JobChip, 0, len(count))
	for id, n := range count {
		out = append(out, JobChip{ID: id, Color: JobColor(id), GPUs: n})
	}
	slices.SortFunc(out, func(a, b JobChip) int { return cmp.Or(cmp.Compare(b.GPUs, a.GPUs), cmp.Compare(a.ID, b.ID)) })
	return out
}
