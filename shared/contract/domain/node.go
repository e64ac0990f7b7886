package domain

import "time"

// Node is what an agent registers about its machine.
type Node struct {
	Name string `json:"name"`
	// Addr is the address other ranks reach this node at (MASTER_ADDR).
	Addr string `json:"addr"`
	GPUs int    `json:"gpus"`
	CPUs int    `json:"cpus,omitempty"`
	// Leaf, Spine and Block are the node's topology labels as the agent
	// reports them; a topology file, where configured, wins.
	Leaf  string `json:"leaf,omitempty"`
	Spine string `json:"spine,omitempty"`
	Block string `json:"block,omitempty"`
	// NUMA describes which GPUs and CPU cores share a NUMA node.
	NUMA []NUMANode `json:"numa,omitempty"`
	// Epoch identifies one registration (the agent's etcd lease ID). Work
	// written for another epoch is stale and never started.
	Epoch int64 `json:"epoch"`
}

// NUMANode is one NUMA domain of a node.
type NUMANode struct {
	ID   int   `json:"id"`
	GPUs []int `json:"gpus"`
	CPUs []int `json:"cpus"`
}

// NodeState is an operator's decision about a node (key store.NodeStateKey):
// a drained node gets no new work and its gangs are checkpoint-drained.
type NodeState struct {
	Drained bool      `json:"drained"`
	Reason  string    `json:"reason,omitempty"`
	Since   time.Time `json:"since"`
}

// NodeRequest is an operator's drain or resume of a node.
type NodeRequest struct {
	Node   string `json:"node"`
	Reason string `json:"reason,omitempty"`
}

// NodeInfo is one row of `lockstep node list`.
type NodeInfo struct {
	Node     Node      `json:"node"`
	Up       bool      `json:"up"`
	State    NodeState `json:"state"`
	GPUsUsed int       `json:"gpusUsed"`
	Jobs     []string  `json:"jobs,omitempty"`
}
