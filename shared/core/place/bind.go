package place

import (
	"cmp"
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// bindNode gives node i's ranks their GPUs (and cores): with closest
// binding each rank's GPUs and cores come from one NUMA node, lowest
// indices first within it; the NUMA nodes are chosen best fit: the one
// with the least room that holds every rank, else the roomiest first, so
// that whole NUMA nodes stay free when they can. Without it, GPUs are the
// lowest free indices, split in order, and cores (when CPUsPerTask > 0)
// the lowest free cores. Where the node says how its GPUs are linked, the
// GPUs a node's ranks get are the best-connected free ones (closestGPUs)
// rather than the lowest. Ranks come back in GPU order with LocalRank set;
// Rank is left for the caller. The filters guarantee the node fits.
func bindNode(cs *cycleState, i int) []domain.Rank {
	r := cs.req
	nv := &cs.snap.Nodes[i]
	st := &cs.idx.nodes[i]
	freeCPUs := nv.FreeCPUs
	if freeCPUs == nil && r.CPUsPerTask > 0 {
		freeCPUs = allCPUs(*nv.Node)
	}
	var ranks []domain.Rank
	if r.GPUBind != BindClosest {
		gpus := slices.Clone(nv.Free)
		slices.Sort(gpus)
		gpus = closestGPUs(gpus, r.TasksPerNode*cs.perRank, nv.Node.GPUDistance)
		cpus := slices.Clone(freeCPUs)
		slices.Sort(cpus)
		for t := range r.TasksPerNode {
			rk := domain.Rank{LocalRank: t, GPUs: slices.Clone(gpus[t*cs.perRank : (t+1)*cs.perRank])}
			if r.CPUsPerTask > 0 {
				rk.CPUs = slices.Clone(cpus[t*r.CPUsPerTask : (t+1)*r.CPUsPerTask])
			}
			ranks = append(ranks, rk)
		}
		return ranks
	}

	type dom struct {
		idx        int
		gpus, cpus []int
		room       int
	}
	doms := make([]dom, len(st.doms))
	for d := range doms {
		doms[d].idx = d
	}
	for _, g := range nv.Free {
		if g >= 0 && g < len(st.gpuDom) && st.gpuDom[g] >= 0 {
			d := st.gpuDom[g]
			doms[d].gpus = append(doms[d].gpus, g)
		}
	}
	for _, c := range freeCPUs {
		if c >= 0 && c < len(st.cpuDom) && st.cpuDom[c] >= 0 {
			d := st.cpuDom[c]
			doms[d].cpus = append(doms[d].cpus, c)
		}
	}
	for d := range doms {
		slices.Sort(doms[d].gpus)
		slices.Sort(doms[d].cpus)
		doms[d].room = domRanks(len(doms[d].gpus), len(doms[d].cpus), cs.perRank, r.CPUsPerTask)
	}
	order := slices.Clone(doms)
	slices.SortFunc(order, func(a, b dom) int { return cmp.Or(cmp.Compare(a.room, b.room), cmp.Compare(a.idx, b.idx)) })
	if one := slices.IndexFunc(order, func(d dom) bool { return d.room >= r.TasksPerNode }); one >= 0 {
		order = order[one : one+1]
		d := &order[0]
		d.gpus = closestGPUs(d.gpus, r.TasksPerNode*cs.perRank, nv.Node.GPUDistance)
	} else {
		slices.SortFunc(order, func(a, b dom) int { return cmp.Or(cmp.Compare(b.room, a.room), cmp.Compare(a.idx, b.idx)) })
	}
	for _, d := range order {
		for k := 0; k < d.room && len(ranks) < r.TasksPerNode; k++ {
			rk := domain.Rank{GPUs: slices.Clone(d.gpus[k*cs.perRank : (k+1)*cs.perRank])}
			if r.CPUsPerTask > 0 {
				rk.CPUs = slices.Clone(d.cpus[k*r.CPUsPerTask : (k+1)*r.CPUsPerTask])
			}
			ranks = append(ranks, rk)
		}
	}
	slices.SortFunc(ranks, func(a, b domain.Rank) int { return cmp.Compare(a.GPUs[0], b.GPUs[0]) })
	for t := range ranks {
		ranks[t].LocalRank = t
	}
	return ranks
}

// build assembles the placement: node ranks follow the chosen order, the
// master is node rank 0, ranks are numbered densely.
func build(cs *cycleState, nodes []int32, port int) domain.Placement {
	p := domain.Placement{MasterAddr: cs.snap.Nodes[nodes[0]].Node.Addr, MasterPort: port}
	rank := 0
	for nodeRank, i := range nodes {
		nv := &cs.snap.Nodes[i]
		ranks := bindNode(cs, int(i))
		np := domain.NodePlacement{Node: nv.Node.Name, NodeRank: nodeRank}
		for t := range ranks {
			ranks[t].Rank = rank
			rank++
			np.GPUs = append(np.GPUs, ranks[t].GPUs...)
		}
		slices.Sort(np.GPUs)
		np.Ranks = ranks
		p.Nodes = append(p.Nodes, np)
		if leaf := cs.idx.leafOf[i]; !cs.idx.sw[leaf].pseudo && !slices.Contains(p.Leaves, cs.idx.sw[leaf].name) {
			p.Leaves = append(p.Leaves, cs.idx.sw[leaf].name)
		}
	}
	return p
}
