package place

import "github.com/lockstep-dev/lockstep/shared/contract/domain"

// PodResult is what the per-pod baseline managed.
type PodResult struct {
	// Wanted is the number of pods (ranks) in the gang, Placed how many
	// got a node.
	Wanted int `json:"wanted"`
	Placed int `json:"placed"`
	// Pods lists the placed pods, rank order.
	Pods []domain.NodePlacement `json:"pods"`
	// Leaves is the number of leaf switches the placed pods span.
	Leaves int `json:"leaves"`
}

// Complete reports whether every pod was placed.
func (r PodResult) Complete() bool { return r.Placed == r.Wanted }

// PlacePods is the Kubernetes-style baseline Lockstep is compared with: it
// places each rank of the gang as an independent pod of
// GPUsPerNode/TasksPerNode GPUs on the up, undrained node with the most
// free GPUs (the LeastAllocated score; ties by name), ignoring topology,
// NUMA and the other pods. It is not all-or-nothing: the pods it places
// keep their GPUs in snap (it calls Take for each) even when the rest do
// not fit, which is how partial gangs deadlock a cluster.
func PlacePods(snap *Snapshot, req Request) PodResult {
	req, err := req.normalized()
	if err != nil {
		return PodResult{}
	}
	per := req.perRank()
	res := PodResult{Wanted: req.Nodes * req.TasksPerNode}
	x := snap.prepared()
	leaves := map[int32]bool{}
	for rank := range res.Wanted {
		best := -1
		for i := range snap.Nodes {
			nv := &snap.Nodes[i]
			if !nv.Up || nv.Drained || len(nv.Free) < per {
				continue
			}
			if best < 0 || len(nv.Free) > len(snap.Nodes[best].Free) ||
				(len(nv.Free) == len(snap.Nodes[best].Free) && nv.Node.Name < snap.Nodes[best].Node.Name) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		nv := &snap.Nodes[best]
		gpus := append([]int(nil), nv.Free[:per]...)
		pod := domain.NodePlacement{
			Node: nv.Node.Name, GPUs: gpus,
			Ranks: []domain.Rank{{Rank: rank, GPUs: gpus}},
		}
		snap.Take(domain.Placement{Nodes: []domain.NodePlacement{pod}})
		res.Pods = append(res.Pods, pod)
		res.Placed++
		leaves[x.leafOf[best]] = true
	}
	res.Leaves = len(leaves)
	return res
}
