package discover

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestFillNodeFromFixtures(t *testing.T) {
	for _, tc := range []struct {
		shape    string
		gpus     int
		cpus     int
		model    string
		memMiB   int64
		numaGPUs [][]int
		numaNICs [][]string
		// dist01 and dist04 are GPU 0's distance to GPUs 1 and (where
		// there is one) 4, as topo -m says; -1: no matrix.
		dist01, dist04 int
	}{
		{"dgx-h100", 8, 224, "NVIDIA H100 80GB HBM3", 81559, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}},
			// Each GPU's own NIC first (topo -m PXB: GPU1–mlx5_3, …), then
			// the storage ports.
			[][]string{{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_1", "mlx5_2"}, {"mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11", "mlx5_7", "mlx5_8"}},
			domain.LinkNVLink, domain.LinkNVLink},
		{"pcie-4x-l40s", 4, 0, "NVIDIA L40S", 46068, nil, nil, domain.LinkSys, -1},
		{"cpu-only", 0, 40, "", 0, [][]int{{}, {}}, [][]string{nil, nil}, -1, -1},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			inv, err := Discover(context.Background(), fixture(t, tc.shape))
			if err != nil {
				t.Fatal(err)
			}
			n := domain.Node{Name: "n", Simulated: true}
			inv.FillNode(&n)
			if n.GPUs != tc.gpus || n.GPUModel != tc.model || n.GPUMemoryMiB != tc.memMiB || n.Simulated || n.Name != "n" {
				t.Errorf("%+v", n)
			}
			if tc.cpus != 0 && n.CPUs != tc.cpus {
				t.Errorf("CPUs %d, want %d", n.CPUs, tc.cpus)
			}
			if len(n.NUMA) != len(inv.NUMANodes) {
				t.Fatalf("NUMA %+v", n.NUMA)
			}
			seen := 0
			for i, d := range n.NUMA {
				seen += len(d.GPUs)
				if !reflect.DeepEqual(d.CPUs, inv.NUMANodes[i].CPUs) || d.MemoryMiB != inv.NUMANodes[i].MemoryMiB {
					t.Errorf("NUMA %d: %+v", i, d)
				}
				if tc.numaGPUs != nil && !reflect.DeepEqual(d.GPUs, tc.numaGPUs[i]) {
					t.Errorf("NUMA %d GPUs %v, want %v", i, d.GPUs, tc.numaGPUs[i])
				}
				if tc.numaNICs != nil && !reflect.DeepEqual(d.NICs, tc.numaNICs[i]) {
					t.Errorf("NUMA %d NICs %v, want %v", i, d.NICs, tc.numaNICs[i])
				}
			}
			if seen != tc.gpus {
				t.Errorf("%d of %d GPUs on a NUMA node", seen, tc.gpus)
			}
			switch {
			case tc.dist01 < 0 && n.GPUDistance != nil:
				t.Errorf("GPU distances %v on a machine without GPU links", n.GPUDistance)
			case tc.dist01 >= 0 && (len(n.GPUDistance) != tc.gpus || n.GPUDistance[0][1] != tc.dist01 || n.GPUDistance[0][0] != domain.LinkSame):
				t.Errorf("GPU distances %v, want GPU 0 to 1 at %d", n.GPUDistance, tc.dist01)
			case tc.dist04 >= 0 && n.GPUDistance[0][4] != tc.dist04:
				t.Errorf("GPU 0 to 4 at %d, want %d", n.GPUDistance[0][4], tc.dist04)
			}
			if _, err := domain.DecodeNode(mustJSON(t, domain.Node{Name: "n", Addr: "n", GPUs: n.GPUs, GPUDistance: n.GPUDistance})); err != nil {
				t.Errorf("the registration's checks refuse the distances: %v", err)
			}
		})
	}
}

// Mixed GPUs have no one model; a port known down is no NIC for NCCL; a GPU
// of unknown NUMA node on a one-node machine is on that node.
func TestFillNodeEdges(t *testing.T) {
	inv := Inventory{
		NUMANodes: []NUMANode{{ID: 0, CPUs: []int{0, 1, 4}}},
		GPUs:      []GPU{{Index: 0, Name: "A", MemoryMiB: 100, NUMANode: -1}, {Index: 1, Name: "B", MemoryMiB: 50, NUMANode: 0}},
		NICs:      []NIC{{Name: "mlx5_0", State: "DOWN"}, {Name: "mlx5_1", State: "ACTIVE"}},
	}
	var n domain.Node
	inv.FillNode(&n)
	if n.GPUModel != "" || n.GPUMemoryMiB != 50 || n.CPUs != 5 || !reflect.DeepEqual(n.NUMA[0].GPUs, []int{0, 1}) || !reflect.DeepEqual(n.NUMA[0].NICs, []string{"mlx5_1"}) {
		t.Errorf("%+v", n)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
