package discover

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixtureSMI answers like nvidia-smi from a fixture directory's files,
// without a shell (CommandSMI is tested on the stub script separately).
func fixtureSMI(dir string) SMI {
	return func(_ context.Context, args ...string) ([]byte, error) {
		if slices.Equal(args, topoQuery) {
			return os.ReadFile(filepath.Join(dir, "topo-m.txt"))
		}
		return os.ReadFile(filepath.Join(dir, "query-gpu.csv"))
	}
}

func fixture(t *testing.T, shape string) Sources {
	t.Helper()
	dir := filepath.Join("testdata", shape)
	src := Sources{Sys: os.DirFS(filepath.Join(dir, "sys")), NoSMI: "no GPUs: nvidia-smi not found on PATH"}
	if _, err := os.Stat(filepath.Join(dir, "query-gpu.csv")); err == nil {
		src.SMI = fixtureSMI(dir)
	}
	return src
}

func TestDiscoverFixtures(t *testing.T) {
	for _, tc := range []struct {
		shape      string
		cpus       int
		nodeCPUs   []int   // usable CPUs per NUMA node
		nodeCores  []int   // physical cores per NUMA node
		gpusOn     [][]int // GPU indexes per NUMA node
		gpuName    string
		nics       int
		nicsOn     []int // NICs per NUMA node
		link01     string
		link03     string
		noteSubstr string
	}{
		{"dgx-h100", 224, []int{112, 112}, []int{56, 56}, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, "NVIDIA H100 80GB HBM3", 12, []int{6, 6}, "NV18", "NV18", ""},
		{"pcie-4x-l40s", 128, []int{64, 64}, []int{32, 32}, [][]int{{0, 1}, {2, 3}}, "NVIDIA L40S", 0, []int{0, 0}, "SYS", "SYS", "no RDMA NICs"},
		{"cpu-only", 40, []int{20, 20}, []int{10, 10}, [][]int{nil, nil}, "", 0, []int{0, 0}, "", "", "nvidia-smi not found"},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			inv, err := Discover(context.Background(), fixture(t, tc.shape))
			if err != nil {
				t.Fatal(err)
			}
			if inv.CPUs != tc.cpus || inv.ThreadsPerCore != 2 || len(inv.NUMANodes) != len(tc.nodeCPUs) {
				t.Fatalf("cpus %d, threads/core %d, %d NUMA nodes", inv.CPUs, inv.ThreadsPerCore, len(inv.NUMANodes))
			}
			for i, n := range inv.NUMANodes {
				if n.ID != i || len(n.CPUs) != tc.nodeCPUs[i] || n.Cores != tc.nodeCores[i] || n.MemoryMiB <= 0 {
					t.Errorf("node %d: id %d, %d CPUs, %d cores, %d MiB", i, n.ID, len(n.CPUs), n.Cores, n.MemoryMiB)
				}
				if got := inv.GPUsOn(i); !slices.Equal(got, tc.gpusOn[i]) {
					t.Errorf("GPUs on node %d = %v, want %v", i, got, tc.gpusOn[i])
				}
				nics := 0
				for _, nic := range inv.NICs {
					if nic.NUMANode == i && nic.State == "ACTIVE" {
						nics++
					}
				}
				if nics != tc.nicsOn[i] {
					t.Errorf("active NICs on node %d = %d, want %d", i, nics, tc.nicsOn[i])
				}
			}
			if tc.nics > 0 && (inv.NICs[2].Name != "mlx5_2" || inv.NICs[tc.nics-1].Name != "mlx5_11") {
				t.Errorf("NICs not in natural order: %v", inv.NICs)
			}
			if len(inv.NICs) != tc.nics {
				t.Errorf("%d NICs, want %d", len(inv.NICs), tc.nics)
			}
			for _, g := range inv.GPUs {
				if g.Name != tc.gpuName || g.MemoryMiB <= 0 || !strings.HasPrefix(g.PCIBusID, "0000:") || strings.ToLower(g.PCIBusID) != g.PCIBusID {
					t.Errorf("GPU %+v", g)
				}
			}
			if tc.link01 != "" && (inv.GPULinks.Between(0, 1).String() != tc.link01 || inv.GPULinks.Between(0, 3).String() != tc.link03 || inv.GPULinks.Between(2, 2).Kind != LinkSelf) {
				t.Errorf("links: %v", inv.GPULinks)
			}
			if tc.link01 == "" && inv.GPULinks != nil {
				t.Errorf("links without GPUs: %v", inv.GPULinks)
			}
			if tc.noteSubstr != "" && !slices.ContainsFunc(inv.Notes, func(n string) bool { return strings.Contains(n, tc.noteSubstr) }) {
				t.Errorf("notes %q lack %q", inv.Notes, tc.noteSubstr)
			}
		})
	}
}

func TestDiscoverHonoursCpuset(t *testing.T) {
	src := fixture(t, "dgx-h100")
	src.Proc = mapFS(map[string]string{"self/status": "Name:\tlockstep\nCpus_allowed_list:\t0-3,112-115,200\nMems_allowed_list:\t0-1\n"})
	inv, err := Discover(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if inv.CPUs != 9 || len(inv.NUMANodes[0].CPUs) != 8 || inv.NUMANodes[0].Cores != 4 || !slices.Equal(inv.NUMANodes[1].CPUs, []int{200}) {
		t.Errorf("cpus %d, nodes %+v", inv.CPUs, inv.NUMANodes)
	}
	if !strings.Contains(strings.Join(inv.Notes, "\n"), "cpuset: 9 of 224") {
		t.Errorf("notes %q lack the cpuset", inv.Notes)
	}
}

// TestStubSMI runs a fixture's stub script through CommandSMI, as the CLI does.
func TestStubSMI(t *testing.T) {
	smi, why := FindSMI(filepath.Join("testdata", "dgx-h100", "nvidia-smi"))
	if smi == nil {
		t.Fatal(why)
	}
	src := fixture(t, "dgx-h100")
	src.SMI = smi
	inv, err := Discover(context.Background(), src)
	if err != nil || len(inv.GPUs) != 8 || inv.GPUs[7].NUMANode != 1 || inv.GPUs[7].PCIBusID != "0000:db:00.0" {
		t.Fatalf("%v %+v", err, inv.GPUs)
	}
	if _, why := FindSMI(filepath.Join(t.TempDir(), "nvidia-smi")); !strings.Contains(why, "not an executable") {
		t.Errorf("missing binary: %q", why)
	}
}
