package place

// drainedFilter rejects nodes being drained.
type drainedFilter struct{}

func (drainedFilter) Name() string { return filterDrained }

func (drainedFilter) Filter(cs *cycleState, i int) bool {
	return cs.capacity || !cs.snap.Nodes[i].Drained
}

func (drainedFilter) Reason(*cycleState) string { return "drained" }
