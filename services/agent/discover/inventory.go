package discover

// Inventory is what discovery found on one node. Its JSON is the output of
// `lockstep agent --discover -o json`.
type Inventory struct {
	// CPUs is how many CPUs this process may use: online and in its cpuset.
	CPUs int `json:"cpus"`
	// ThreadsPerCore is the SMT width seen in the usable CPUs (1 without SMT
	// or when sysfs does not say).
	ThreadsPerCore int        `json:"threadsPerCore"`
	NUMANodes      []NUMANode `json:"numaNodes"`
	GPUs           []GPU      `json:"gpus"`
	// GPULinks[i][j] is how GPU i reaches GPU j (indexes as in GPUs); nil when
	// nvidia-smi topo -m was not available.
	GPULinks LinkMatrix `json:"gpuLinks,omitempty"`
	NICs     []NIC      `json:"nics"`
	// Notes say why something is missing or unknown; empty when nothing is.
	Notes []string `json:"notes"`
}

// NUMANode is one NUMA node and the usable CPUs on it.
type NUMANode struct {
	ID int `json:"id"`
	// CPUs are the node's CPUs this process may use (possibly none: a node
	// outside a container's cpuset, or a memory-only node).
	CPUs []int `json:"cpus"`
	// Cores counts the physical cores behind CPUs (SMT siblings count once).
	Cores     int   `json:"cores"`
	MemoryMiB int64 `json:"memoryMiB"`
}

// GPU is one NVIDIA GPU as nvidia-smi lists it.
type GPU struct {
	Index     int    `json:"index"`
	UUID      string `json:"uuid"`
	Name      string `json:"name"`
	MemoryMiB int64  `json:"memoryMiB"`
	// PCIBusID is in sysfs form: 4-digit (or wider) domain, lower case,
	// "0000:18:00.0".
	PCIBusID string `json:"pciBusId"`
	// NUMANode is -1 when the kernel does not know it.
	NUMANode int `json:"numaNode"`
	// NearNICs are the RDMA NICs behind this GPU's own PCIe switch (PIX,
	// then PXB in nvidia-smi topo -m), the ones its traffic should use;
	// none when topo -m does not say.
	NearNICs []string `json:"nearNics,omitempty"`
}

// NIC is one RDMA device from /sys/class/infiniband.
type NIC struct {
	Name     string `json:"name"`
	NUMANode int    `json:"numaNode"`
	// State is port 1's state name, e.g. "ACTIVE" or "DOWN"; "UNKNOWN" when
	// sysfs does not say.
	State string `json:"state"`
}

// GPUsOn returns the indexes of the GPUs on NUMA node id.
func (inv Inventory) GPUsOn(id int) []int {
	var out []int
	for _, g := range inv.GPUs {
		if g.NUMANode == id {
			out = append(out, g.Index)
		}
	}
	return out
}
