package place

import "fmt"

// bindingFilter checks the gang's per-node shape against the node's free
// layout: with closest binding, TasksPerNode ranks must each find
// GPUsPerNode/TasksPerNode GPUs and CPUsPerTask cores free on one NUMA
// node; without it, CPUsPerTask > 0 needs TasksPerNode×CPUsPerTask free
// cores anywhere on the node. A node that reports no cores cannot host a
// gang that asks for cores.
type bindingFilter struct{}

func (bindingFilter) Name() string { return filterBinding }

func (bindingFilter) Filter(cs *cycleState, i int) bool {
	r := cs.req
	if r.GPUBind != BindClosest && r.CPUsPerTask == 0 {
		return true
	}
	_, ranks, cores := freeLayout(cs, i)
	if r.GPUBind == BindClosest {
		return ranks >= r.TasksPerNode
	}
	return cores >= r.TasksPerNode*r.CPUsPerTask
}

func (bindingFilter) Reason(cs *cycleState) string {
	r := cs.req
	if r.GPUBind == BindClosest {
		what := fmt.Sprintf("%s of %s", plural(r.TasksPerNode, "rank"), plural(cs.perRank, "GPU"))
		if r.CPUsPerTask > 0 {
			what += fmt.Sprintf(" and %s", plural(r.CPUsPerTask, "core"))
		}
		return "without room for " + what + " each on one NUMA node"
	}
	free := "free "
	if cs.capacity {
		free = ""
	}
	return fmt.Sprintf("with fewer than %d %scores", r.TasksPerNode*r.CPUsPerTask, free)
}

// freeLayout counts, for node i, the free GPUs and cores per NUMA domain
// (into the cycle's scratch counters), how many closest-bound ranks fit,
// and the free cores in total. In capacity mode everything is free.
func freeLayout(cs *cycleState, i int) (doms int, ranks int, cores int) {
	st := &cs.idx.nodes[i]
	nv := &cs.snap.Nodes[i]
	nd := len(st.doms)
	var gArr, cArr [8]int32
	var g, c []int32
	if nd <= len(gArr) {
		g, c = gArr[:nd], cArr[:nd]
	} else {
		g, c = cs.scratch(nd)
	}
	if cs.capacity {
		copy(g, st.domGPUs)
	} else {
		for _, gpu := range nv.Free {
			if gpu >= 0 && gpu < len(st.gpuDom) && st.gpuDom[gpu] >= 0 {
				g[st.gpuDom[gpu]]++
			}
		}
	}
	if cs.capacity || nv.FreeCPUs == nil {
		copy(c, st.domCPUs)
	} else {
		for _, cpu := range nv.FreeCPUs {
			if cpu >= 0 && cpu < len(st.cpuDom) && st.cpuDom[cpu] >= 0 {
				c[st.cpuDom[cpu]]++
			}
		}
	}
	for d := range nd {
		cores += int(c[d])
		ranks += domRanks(int(g[d]), int(c[d]), cs.perRank, cs.req.CPUsPerTask)
	}
	return nd, ranks, cores
}

// domRanks is how many ranks of perRank GPUs and cpus cores fit in a NUMA
// domain with the given free GPUs and cores.
func domRanks(gpus, cores, perRank, cpus int) int {
	n := gpus / perRank
	if cpus > 0 {
		n = min(n, cores/cpus)
	}
	return n
}
