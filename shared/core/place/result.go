package place

import "github.com/lockstep-dev/lockstep/shared/contract/domain"

// Code says whether a gang was placed, and if not, whether waiting helps.
type Code string

const (
	// Placed: Result.Placement is valid.
	Placed Code = "Placed"
	// Wait: the gang could run on this cluster, but not now (or not yet:
	// a bounded topology wait is in progress).
	Wait Code = "Wait"
	// Unschedulable: the gang can never run on this cluster, even empty.
	Unschedulable Code = "Unschedulable"
	// Error: the snapshot itself is faulty (inconsistent topology labels).
	// Nothing about the gang is known.
	Error Code = "Error"
)

// Reason codes: the first word of Result.Reason, and Result.ReasonCode.
const (
	// ReasonResources: not enough suitable free capacity now.
	ReasonResources = domain.ReasonResources
	// ReasonWaitingForSwitches: a maxSwitches wait is in progress.
	ReasonWaitingForSwitches = "WaitingForSwitches"
	// ReasonWaitingForTopology: a preferred-level wait is in progress.
	ReasonWaitingForTopology = "WaitingForTopology"
	// ReasonRequiredTopology: enough capacity, but not within one domain
	// of the required level.
	ReasonRequiredTopology = "RequiredTopology"
	// ReasonNoNodes: the gang can never fit this cluster.
	ReasonNoNodes = domain.ReasonNoNodes
	// ReasonInvalidRequest: the gang's shape is malformed.
	ReasonInvalidRequest = "InvalidRequest"
	// ReasonTopologyError: the snapshot's topology is inconsistent.
	ReasonTopologyError = "TopologyError"
	// ReasonRelaxed: (on Placed results) a soft constraint was dropped.
	ReasonRelaxed = "Relaxed"
)

// Result is a decision with its explanation.
type Result struct {
	Code      Code              `json:"code"`
	Placement *domain.Placement `json:"placement,omitempty"`
	// ReasonCode is one of the Reason* constants ("" for a plain Placed).
	ReasonCode string `json:"reasonCode,omitempty"`
	// Reason is short, for `lockstep queue`, and starts with ReasonCode:
	// "Resources: 1 of 2 nodes with 8 free GPUs", "WaitingForSwitches (12m left)".
	Reason string `json:"reason,omitempty"`
	// Detail says why in numbers, for `lockstep describe`; on a Placed
	// result it describes the placement.
	Detail string `json:"detail,omitempty"`
	// Relaxed is set on a placement that dropped a soft constraint
	// (maxSwitches or preferred) after its wait, or because it can never
	// be met on this cluster; Detail says which.
	Relaxed bool `json:"relaxed,omitempty"`
	// Leaves is the number of leaf switches the placement spans (a node
	// outside the topology counts as a leaf of its own), and Level the
	// highest switch level it crosses (-1 for one node, 0 within a leaf).
	Leaves int `json:"leaves,omitempty"`
	Level  int `json:"level,omitempty"`
}
