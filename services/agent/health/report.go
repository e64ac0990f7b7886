package health

import (
	"fmt"
	"strings"
	"time"
)

// Report is one poll's judgement of a node.
type Report struct {
	At time.Time `json:"at"`
	// GPUs are the discovered GPUs, in discovery order.
	GPUs []GPUState `json:"gpus"`
	// Node holds node-level reasons (nvidia-smi unusable, the health-check
	// program failed); empty when the node as a whole is fine.
	Node []string `json:"node,omitempty"`
	// Notes say what was unreadable or ignored; they change no state.
	Notes []string `json:"notes,omitempty"`
}

// GPUState is one GPU's health.
type GPUState struct {
	Index    int    `json:"index"`
	UUID     string `json:"uuid"`
	PCIBusID string `json:"pciBusId"`
	// Reasons say why the GPU is unhealthy; empty when it is healthy.
	Reasons []string `json:"reasons,omitempty"`
}

// Healthy reports whether the GPU may take work.
func (g GPUState) Healthy() bool { return len(g.Reasons) == 0 }

// Reason is the GPU's reasons in one line naming it, for events and
// `node list`: "gpu 3 (GPU-…): 2 uncorrectable ECC errors since the driver
// loaded (ecc.errors.uncorrected.volatile.total: 2)". "" when healthy.
func (g GPUState) Reason() string {
	if g.Healthy() {
		return ""
	}
	return fmt.Sprintf("gpu %d (%s): %s", g.Index, g.UUID, strings.Join(g.Reasons, "; "))
}

// Healthy reports whether the node and every GPU may take work.
func (r Report) Healthy() bool {
	if len(r.Node) > 0 {
		return false
	}
	for _, g := range r.GPUs {
		if !g.Healthy() {
			return false
		}
	}
	return true
}

// NodeReason is the node-level reasons in one line; "" when there are none.
func (r Report) NodeReason() string { return strings.Join(r.Node, "; ") }

// Unhealthy returns the GPUs that may not take work.
func (r Report) Unhealthy() []GPUState {
	var out []GPUState
	for _, g := range r.GPUs {
		if !g.Healthy() {
			out = append(out, g)
		}
	}
	return out
}

// Changes are the transitions between two Reports.
type Changes struct {
	// BecameUnhealthy holds each GPU healthy before and not now, with its
	// current reasons: one gpu-unhealthy event each.
	BecameUnhealthy []GPUState
	// BecameHealthy holds each GPU unhealthy before and healthy now.
	BecameHealthy []GPUState
	// NodeBecameUnhealthy is the node-level reason when the node had none
	// before; NodeBecameHealthy is set when its last one cleared.
	NodeBecameUnhealthy string
	NodeBecameHealthy   bool
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.BecameUnhealthy) == 0 && len(c.BecameHealthy) == 0 && c.NodeBecameUnhealthy == "" && !c.NodeBecameHealthy
}

// Diff returns what changed from prev to cur. GPUs are matched by UUID (an
// index can change at boot); a GPU absent from prev counts as healthy
// before, so Diff(Report{}, first) announces what is already broken. A GPU
// that stays unhealthy for a new reason is no transition.
func Diff(prev, cur Report) Changes {
	was := make(map[string]bool, len(prev.GPUs))
	for _, g := range prev.GPUs {
		was[g.UUID] = g.Healthy()
	}
	var c Changes
	for _, g := range cur.GPUs {
		before, seen := was[g.UUID]
		before = before || !seen
		switch {
		case before && !g.Healthy():
			c.BecameUnhealthy = append(c.BecameUnhealthy, g)
		case !before && g.Healthy():
			c.BecameHealthy = append(c.BecameHealthy, g)
		}
	}
	switch {
	case len(prev.Node) == 0 && len(cur.Node) > 0:
		c.NodeBecameUnhealthy = cur.NodeReason()
	case len(prev.Node) > 0 && len(cur.Node) == 0:
		c.NodeBecameHealthy = true
	}
	return c
}
