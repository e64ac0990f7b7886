package domain

// Placement says where every rank of a gang runs.
type Placement struct {
	Nodes      []NodePlacement `json:"nodes"`
	MasterAddr string          `json:"masterAddr"`
	MasterPort int             `json:"masterPort"`
	// Leaves lists the distinct leaf switches the gang spans.
	Leaves []string `json:"leaves,omitempty"`
}

// NodePlacement is the part of a gang on one node.
type NodePlacement struct {
	Node     string `json:"node"`
	NodeRank int    `json:"nodeRank"`
	GPUs     []int  `json:"gpus"`
	Ranks    []Rank `json:"ranks"`
}

// Rank is one process of a gang.
type Rank struct {
	Rank      int   `json:"rank"`
	LocalRank int   `json:"localRank"`
	GPUs      []int `json:"gpus"`
	CPUs      []int `json:"cpus,omitempty"`
}

// GPUCount is the number of GPUs the placement claims.
func (p Placement) GPUCount() int {
	n := 0
	for _, np := range p.Nodes {
		n += len(np.GPUs)
	}
	return n
}

// NodeNames lists the placement's nodes in node-rank order.
func (p Placement) NodeNames() []string {
	out := make([]string, len(p.Nodes))
	for i, np := range p.Nodes {
		out[i] = np.Node
	}
	return out
}

// Places reports whether node is one of the placement's nodes.
func (p Placement) Places(node string) bool {
	for _, np := range p.Nodes {
		if np.Node == node {
			return true
		}
	}
	return false
}

// WorldSize is the number of ranks.
func (p Placement) WorldSize() int {
	n := 0
	for _, np := range p.Nodes {
		n += len(np.Ranks)
	}
	return n
}
