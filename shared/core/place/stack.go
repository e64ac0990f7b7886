package place

// stackOrder is the node filter pipeline, run for every node in this
// order; a node counts against the first filter that rejects it.
var stackOrder = []string{
	// A node whose agent lease expired cannot start anything.
	filterUp,
	// A draining node keeps its gangs but takes no new ones.
	filterDrained,
	// A node short of free GPUs because health checks withdrew some says so.
	filterHealthy,
	// The cheap, most selective check: enough free GPUs.
	filterGPUs,
	filterModel,   // static: the GPU model and memory the gang asks for
	filterRuntime, // static: a container engine for a container job
	// Last, the per-NUMA arithmetic: the gang's per-node shape (ranks,
	// GPUs and cores per rank, closest binding) must fit the free layout.
	filterBinding,
}

// stack is stackOrder resolved through the registry once.
var stack = func() []filter {
	out := make([]filter, len(stackOrder))
	for i, name := range stackOrder {
		out[i] = registry[name]()
	}
	return out
}()
