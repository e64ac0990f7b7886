package domain

import "time"

// Node is what an agent registers about its machine.
type Node struct {
	Name string `json:"name"`
	// Addr is the address other ranks reach this node at (MASTER_ADDR).
	Addr string `json:"addr"`
	GPUs int    `json:"gpus"`
	// CPUs is one past the highest usable core number (cores are numbered
	// as the kernel numbers them, so a containerised agent's cpuset may
	// leave gaps; NUMA lists which exist).
	CPUs int `json:"cpus,omitempty"`
	// GPUModel and GPUMemoryMiB describe the node's GPUs as discovery found
	// them (nvidia-smi's name, e.g. "NVIDIA H100 80GB HBM3", and the
	// smallest GPU's memory); empty on a node that did not say.
	GPUModel     string `json:"gpuModel,omitempty"`
	GPUMemoryMiB int64  `json:"gpuMemoryMiB,omitempty"`
	// Simulated marks a node whose GPUs are declared (agent --gpus N), not
	// discovered: fine for development, never for a real job.
	Simulated bool `json:"simulated,omitempty"`
	// ContainerRuntime names the engine the agent runs container jobs'
	// ranks through (ContainerRuntimeDocker); empty on a node that runs
	// none, so placement never sends it one.
	ContainerRuntime string `json:"containerRuntime,omitempty"`
	// Leaf, Spine and Block are the node's topology labels as the agent
	// reports them; a topology file, where configured, wins.
	Leaf  string `json:"leaf,omitempty"`
	Spine string `json:"spine,omitempty"`
	Block string `json:"block,omitempty"`
	// NUMA describes which GPUs and CPU cores share a NUMA node.
	NUMA []NUMANode `json:"numa,omitempty"`
	// GPUDistance[a][b] is how far GPU a is from GPU b, by the link
	// between them as `nvidia-smi topo -m` names it: 0 the same GPU, then
	// the LinkDistance values from NVLink to SYS. Nil when the agent did
	// not find the links; placement then takes a node's lowest free GPUs.
	GPUDistance [][]int `json:"gpuDistance,omitempty"`
	// Unhealthy lists the GPUs the agent's health checks withdrew from
	// placement; they stay withdrawn until an operator resumes the node.
	Unhealthy []GPUFault `json:"unhealthy,omitempty"`
	// Epoch identifies one registration (the agent's etcd lease ID). Work
	// written for another epoch is stale and never started.
	Epoch int64 `json:"epoch"`
}

// ContainerRuntimeDocker is the Docker Engine API (Docker, or Podman's
// compatible service).
const ContainerRuntimeDocker = "docker"

// NUMANode is one NUMA domain of a node.
type NUMANode struct {
	ID   int   `json:"id"`
	GPUs []int `json:"gpus"`
	CPUs []int `json:"cpus"`
	// MemoryMiB is the node's memory on this NUMA node (0: unknown).
	MemoryMiB int64 `json:"memoryMiB,omitempty"`
	// NICs are the RDMA devices attached here (e.g. "mlx5_0"), for
	// NCCL_IB_HCA and UCX_NET_DEVICES.
	NICs []string `json:"nics,omitempty"`
}

// GPUFault is one GPU withdrawn by a failed health check.
type GPUFault struct {
	GPU    int       `json:"gpu"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

// WithdrawnGPUs returns the set of GPU indices health checks withdrew.
func (n Node) WithdrawnGPUs() map[int]bool {
	out := make(map[int]bool, len(n.Unhealthy))
	for _, f := range n.Unhealthy {
		out[f.GPU] = true
	}
	return out
}

// NodeState is an operator's decision about a node (key store.NodeStateKey):
// a drained node gets no new work and its gangs are checkpoint-drained.
type NodeState struct {
	Drained bool      `json:"drained"`
	Reason  string    `json:"reason,omitempty"`
	Since   time.Time `json:"since"`
	// ResumedAt is when an operator last resumed the node: the agent
	// returns the GPUs its health checks withdrew before then.
	ResumedAt time.Time `json:"resumedAt,omitzero"`
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
	// DownSince is when a down node was last seen going down (zero when up,
	// or when the events stream no longer says).
	DownSince time.Time `json:"downSince,omitzero"`
}

// Link distances of Node.GPUDistance, closest first, as `nvidia-smi topo
// -m` names the links.
const (
	LinkSame   = 0 // X: the GPU itself
	LinkNVLink = 1 // NV#: bonded NVLinks
	LinkPIX    = 2 // at most one PCIe bridge
	LinkPXB    = 3 // several PCIe bridges, no host bridge
	LinkPHB    = 4 // through a PCIe host bridge (the CPU)
	LinkNode   = 5 // between host bridges within a NUMA node
	LinkSys    = 6 // across NUMA nodes
)
