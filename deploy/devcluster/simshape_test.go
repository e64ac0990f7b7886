package devcluster_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
)

// Every GPU count `lockstep dev --gpus-per-node` accepts gives a node with
// that many GPUs, each on a NUMA node with cores and a NIC.
func TestSimulatedNodesEveryGPUCount(t *testing.T) {
	for g := 1; g <= 64; g++ {
		n := devcluster.SimulatedNodes(1, g, 1)[0]
		if n.GPUs != g || n.CPUs != 224 || !n.Simulated {
			t.Fatalf("%d GPUs: %+v", g, n)
		}
		gpus := 0
		for _, d := range n.NUMA {
			gpus += len(d.GPUs)
			if len(d.GPUs) != len(d.NICs) || len(d.CPUs) == 0 {
				t.Errorf("%d GPUs: NUMA %d has %d GPUs, %d NICs, %d cores", g, d.ID, len(d.GPUs), len(d.NICs), len(d.CPUs))
			}
		}
		if gpus != g {
			t.Errorf("%d GPUs: %d on NUMA nodes", g, gpus)
		}
	}
}
