package place

import "fmt"

// gpusFilter rejects nodes with fewer than GPUsPerNode free GPUs (in
// capacity mode: GPUs at all).
type gpusFilter struct{}

func (gpusFilter) Name() string { return filterGPUs }

func (gpusFilter) Filter(cs *cycleState, i int) bool {
	if cs.capacity {
		return cs.snap.Nodes[i].Node.GPUs >= cs.req.GPUsPerNode
	}
	return len(cs.snap.Nodes[i].Free) >= cs.req.GPUsPerNode
}

func (gpusFilter) Reason(cs *cycleState) string {
	if cs.capacity {
		return fmt.Sprintf("with fewer than %d GPUs", cs.req.GPUsPerNode)
	}
	return fmt.Sprintf("with fewer than %d free GPUs", cs.req.GPUsPerNode)
}
