package place

// upFilter rejects nodes whose agent is not alive.
type upFilter struct{}

func (upFilter) Name() string { return filterUp }

func (upFilter) Filter(cs *cycleState, i int) bool {
	return cs.capacity || cs.snap.Nodes[i].Up
}

func (upFilter) Reason(*cycleState) string { return "down" }
