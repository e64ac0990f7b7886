package place

// filterRuntime is the runtimeFilter's name.
const filterRuntime = "container-runtime"

// runtimeFilter rejects, for a container job, nodes whose agent runs no
// container engine: there its ranks could only fail to start. Like the
// GPU model, it is a property of the node, so it answers the same in
// capacity mode: a cluster without such nodes can never run the job.
type runtimeFilter struct{}

func (runtimeFilter) Name() string { return filterRuntime }

func (runtimeFilter) Filter(cs *cycleState, i int) bool {
	return !cs.req.Container || cs.snap.Nodes[i].Node.ContainerRuntime != ""
}

func (runtimeFilter) Reason(*cycleState) string { return "without a container runtime" }
