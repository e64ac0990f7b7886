package placetest

import (
	"fmt"
	"math/rand/v2"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// Fabric is a generated switch tree: one core switch above Spines spines,
// each with LeavesPerSpine leaves of NodesPerLeaf nodes (core → spine →
// leaf → node, four levels), every node with GPUs GPUs, 8 cores per GPU
// and Sockets NUMA nodes.
type Fabric struct {
	Spines, LeavesPerSpine, NodesPerLeaf, GPUs, Sockets int
	// AsFile puts the tree in Snapshot.Topology (a topology file) instead
	// of node labels; labels cannot express the core level above spines
	// other than as a synthetic root, so both give the same tree.
	AsFile bool
}

// Fabric1024 is 4 spines × 16 leaves × 16 nodes of 8 GPUs.
var Fabric1024 = Fabric{Spines: 4, LeavesPerSpine: 16, NodesPerLeaf: 16, GPUs: 8, Sockets: 2, AsFile: true}

// Fabric10000 is 25 spines × 25 leaves × 16 nodes of 8 GPUs.
var Fabric10000 = Fabric{Spines: 25, LeavesPerSpine: 25, NodesPerLeaf: 16, GPUs: 8, Sockets: 2, AsFile: true}

// Size is the number of nodes.
func (f Fabric) Size() int { return f.Spines * f.LeavesPerSpine * f.NodesPerLeaf }

func (f Fabric) names(s, l, n int) (spine, leaf, node string) {
	return fmt.Sprintf("spine-%02d", s), fmt.Sprintf("leaf-%02d-%02d", s, l),
		fmt.Sprintf("n%02d-%02d-%02d", s, l, n)
}

// Snapshot builds the idle cluster.
func (f Fabric) Snapshot() *place.Snapshot {
	b := MakeCluster()
	spec := topology.Spec{Switches: []topology.SwitchSpec{{Name: "core"}}}
	for s := range f.Spines {
		spineName, _, _ := f.names(s, 0, 0)
		spec.Switches[0].Children = append(spec.Switches[0].Children, spineName)
		spine := topology.SwitchSpec{Name: spineName}
		var leaves []topology.SwitchSpec
		for l := range f.LeavesPerSpine {
			_, leafName, _ := f.names(s, l, 0)
			spine.Children = append(spine.Children, leafName)
			leaf := topology.SwitchSpec{Name: leafName}
			for n := range f.NodesPerLeaf {
				_, _, name := f.names(s, l, n)
				leaf.Nodes = append(leaf.Nodes, name)
				nb := MakeNode(name).GPUs(f.GPUs).CPUs(8 * f.GPUs).Sockets(f.Sockets)
				if !f.AsFile {
					nb.Leaf(leafName).Spine(spineName)
				}
				b.Add(nb)
			}
			leaves = append(leaves, leaf)
		}
		spec.Switches = append(spec.Switches, spine)
		spec.Switches = append(spec.Switches, leaves...)
	}
	if f.AsFile {
		t, err := topology.New(spec)
		if err != nil {
			panic(err) // generated specs are valid by construction
		}
		b.Topology(t)
	}
	return b.Obj()
}

// Scatter marks GPUs used at random so that about fraction of them are
// taken, spread the way a busy cluster looks: a share of nodes full, a
// share idle, the rest partly used at random indices.
func Scatter(snap *place.Snapshot, r *rand.Rand, fraction float64) {
	for i := range snap.Nodes {
		nv := &snap.Nodes[i]
		g := nv.Node.GPUs
		var used int
		switch p := r.Float64(); {
		case p < fraction*2/3:
			used = g
		case p < fraction*2/3+(1-fraction)*0.5:
			used = 0
		default:
			used = 1 + r.IntN(max(g-1, 1))
		}
		perm := r.Perm(g)
		taken := perm[:min(used, g)]
		var free []int
		for gpu := range g {
			if !contains(taken, gpu) {
				free = append(free, gpu)
			}
		}
		if free == nil {
			free = []int{}
		}
		nv.Free = free
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Shapes is a mix of gang shapes for generated workloads: mostly small,
// some whole-leaf and multi-leaf gangs.
var Shapes = []struct {
	Nodes, GPUs, Weight int
}{
	{1, 1, 20}, {1, 2, 10}, {1, 4, 10}, {1, 8, 15},
	{2, 8, 15}, {4, 8, 10}, {8, 8, 8}, {16, 8, 6}, {32, 8, 4}, {64, 8, 2},
}

// RandomGang draws a gang from Shapes; one in five asks for closest
// binding with cores, one in five for maxSwitches 1.
func RandomGang(r *rand.Rand, id string) place.Request {
	total := 0
	for _, s := range Shapes {
		total += s.Weight
	}
	pick := r.IntN(total)
	var req place.Request
	for _, s := range Shapes {
		if pick < s.Weight {
			req = place.Request{JobID: id, Nodes: s.Nodes, GPUsPerNode: s.GPUs, TasksPerNode: s.GPUs}
			break
		}
		pick -= s.Weight
	}
	if r.IntN(5) == 0 {
		req.GPUBind, req.CPUsPerTask = place.BindClosest, 4
	}
	if r.IntN(5) == 0 && req.Nodes > 1 {
		req.Topology.MaxSwitches = 1
	}
	return req
}
