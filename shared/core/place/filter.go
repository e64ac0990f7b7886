package place

// filter decides whether one node can host one member of the gang. Filters
// are tiny and stateless; stack.go fixes their order and registry.go names
// them. A rejection is not an error: evaluate counts, per filter, the nodes
// it rejected, and explain.go turns the counts into "3 × down" style
// reasons.
type filter interface {
	// Name is the registry name.
	Name() string
	// Filter reports whether node i of the snapshot fits. In capacity mode
	// (cs.capacity) it answers for the node up, undrained and idle.
	Filter(cs *cycleState, i int) bool
	// Reason describes the nodes this filter rejects, as a phrase that
	// follows a count: "down", "with fewer than 8 free GPUs".
	Reason(cs *cycleState) string
}

// cycleState is what filters read: the request and the snapshot, plus
// scratch space reused across nodes.
type cycleState struct {
	snap     *Snapshot
	idx      *index
	req      Request
	perRank  int
	capacity bool

	gpuScratch []int32
	cpuScratch []int32
}

func newCycleState(snap *Snapshot, idx *index, req Request, capacity bool) *cycleState {
	return &cycleState{snap: snap, idx: idx, req: req, perRank: req.perRank(), capacity: capacity}
}

// scratch returns two zeroed per-NUMA-domain counters.
func (cs *cycleState) scratch(n int) ([]int32, []int32) {
	if cap(cs.gpuScratch) < n {
		cs.gpuScratch, cs.cpuScratch = make([]int32, n), make([]int32, n)
	}
	g, c := cs.gpuScratch[:n], cs.cpuScratch[:n]
	clear(g)
	clear(c)
	return g, c
}
