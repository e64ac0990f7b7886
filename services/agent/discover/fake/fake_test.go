package fake_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/services/agent/discover/fake"
	"github.com/lockstep-dev/lockstep/services/agent/health"
)

// pcie4 is a one-socket PCIe server with four L40S and one NIC.
func pcie4() fake.Shape {
	return fake.Shape{
		Sockets: 1, CoresPerSocket: 32, ThreadsPerCore: 2, NUMANodes: 1, MemoryMiBPerNUMA: 515000,
		GPUsPerNUMA: 4, NICsPerNUMA: 1, GPUName: "NVIDIA L40S", GPUMemoryMiB: 46068,
	}
}

// cpuOnly is the shape of ../testdata/cpu-only: 2 × 10 cores with SMT.
func cpuOnly() fake.Shape {
	return fake.Shape{Sockets: 2, CoresPerSocket: 10, ThreadsPerCore: 2, NUMANodes: 2, MemoryMiBPerNUMA: 64000}
}

func discoverMachine(t *testing.T, s fake.Shape) discover.Inventory {
	t.Helper()
	m, err := fake.New("node-1", s)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := discover.Discover(context.Background(), m.Sources())
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestDiscoverSimulatedShapes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		shape     fake.Shape
		cpus      int
		nodeCPUs  []string // cpulist per NUMA node
		nodeCores []int
		memMiB    int64
		gpusOn    [][]int // GPU indexes per NUMA node
		nicsOn    [][]string
		link01    string
		note      string
	}{
		{"dgx-h100", fake.DGXH100(), 224, []string{"0-55,112-167", "56-111,168-223"}, []int{56, 56}, 1031701,
			[][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, [][]string{{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}, {"mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"}}, "NV18", ""},
		{"pcie-4-gpu", pcie4(), 64, []string{"0-63"}, []int{32}, 515000,
			[][]int{{0, 1, 2, 3}}, [][]string{{"mlx5_0"}}, "NODE", ""},
		{"cpu-only", cpuOnly(), 40, []string{"0-9,20-29", "10-19,30-39"}, []int{10, 10}, 64000,
			[][]int{nil, nil}, [][]string{nil, nil}, "", "has no nvidia-smi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := discoverMachine(t, tc.shape)
			if inv.CPUs != tc.cpus || inv.ThreadsPerCore != 2 || len(inv.NUMANodes) != len(tc.nodeCPUs) {
				t.Fatalf("%d CPUs, %d threads per core, %d NUMA nodes", inv.CPUs, inv.ThreadsPerCore, len(inv.NUMANodes))
			}
			for i, n := range inv.NUMANodes {
				if n.ID != i || discover.FormatCPUList(n.CPUs) != tc.nodeCPUs[i] || n.Cores != tc.nodeCores[i] || n.MemoryMiB != tc.memMiB {
					t.Errorf("NUMA %d: %+v", i, n)
				}
				if got := inv.GPUsOn(i); !slices.Equal(got, tc.gpusOn[i]) {
					t.Errorf("GPUs on NUMA %d: %v, want %v", i, got, tc.gpusOn[i])
				}
				var nics []string
				for _, c := range inv.NICs {
					if c.NUMANode == i && c.State == "ACTIVE" {
						nics = append(nics, c.Name)
					}
				}
				if !slices.Equal(nics, tc.nicsOn[i]) {
					t.Errorf("NICs on NUMA %d: %v, want %v", i, nics, tc.nicsOn[i])
				}
			}
			for _, g := range inv.GPUs {
				if g.Name != tc.shape.GPUName || g.MemoryMiB != tc.shape.GPUMemoryMiB || !strings.HasPrefix(g.UUID, "GPU-") {
					t.Errorf("GPU %+v", g)
				}
			}
			if tc.link01 != "" && inv.GPULinks.Between(0, 1).String() != tc.link01 {
				t.Errorf("GPU0–GPU1 %v, want %s", inv.GPULinks.Between(0, 1), tc.link01)
			}
			notes := strings.Join(inv.Notes, "\n")
			if tc.note == "" && tc.shape.NICsPerNUMA > 0 && notes != "" {
				t.Errorf("notes on a complete machine: %s", notes)
			}
			if !strings.Contains(notes, tc.note) {
				t.Errorf("notes lack %q: %s", tc.note, notes)
			}
		})
	}
}

// fixture discovers one of discovery's real-machine fixtures.
func fixture(t *testing.T, shape string) discover.Inventory {
	t.Helper()
	dir := filepath.Join("..", "testdata", shape)
	src := discover.Sources{Sys: os.DirFS(filepath.Join(dir, "sys")), NoSMI: "no nvidia-smi"}
	if _, err := os.Stat(filepath.Join(dir, "query-gpu.csv")); err == nil {
		src.SMI = func(_ context.Context, args ...string) ([]byte, error) {
			if slices.Equal(args, []string{"topo", "-m"}) {
				return os.ReadFile(filepath.Join(dir, "topo-m.txt"))
			}
			return os.ReadFile(filepath.Join(dir, "query-gpu.csv"))
		}
	}
	inv, err := discover.Discover(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestSimulatedMatchesRealFixtures: the simulated DGX H100 and CPU node
// are, to placement, the machines the real fixtures describe: the same CPUs
// on the same NUMA nodes, the same GPUs on the same nodes with the same
// links, NICs on the same nodes. (The real DGX has four storage ports more
// than the eight compute NICs simulated; identities and memory sizes are
// the fixtures' placeholders, so they are not compared.)
func TestSimulatedMatchesRealFixtures(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		shape   fake.Shape
	}{{"dgx-h100", fake.DGXH100()}, {"cpu-only", cpuOnly()}} {
		real, sim := fixture(t, tc.fixture), discoverMachine(t, tc.shape)
		if real.CPUs != sim.CPUs || real.ThreadsPerCore != sim.ThreadsPerCore || len(real.NUMANodes) != len(sim.NUMANodes) {
			t.Fatalf("%s: CPUs %d/%d, threads per core %d/%d, NUMA nodes %d/%d", tc.fixture, real.CPUs, sim.CPUs, real.ThreadsPerCore, sim.ThreadsPerCore, len(real.NUMANodes), len(sim.NUMANodes))
		}
		for i := range real.NUMANodes {
			r, s := real.NUMANodes[i], sim.NUMANodes[i]
			if r.ID != s.ID || !slices.Equal(r.CPUs, s.CPUs) || r.Cores != s.Cores {
				t.Errorf("%s NUMA %d: real %d CPUs %s, %d cores; simulated %d CPUs %s, %d cores", tc.fixture, i, len(r.CPUs), discover.FormatCPUList(r.CPUs), r.Cores, len(s.CPUs), discover.FormatCPUList(s.CPUs), s.Cores)
			}
			if hasNIC(real, r.ID) != hasNIC(sim, s.ID) {
				t.Errorf("%s NUMA %d: NICs real %v, simulated %v", tc.fixture, i, hasNIC(real, r.ID), hasNIC(sim, s.ID))
			}
		}
		if len(real.GPUs) != len(sim.GPUs) {
			t.Fatalf("%s: %d GPUs, simulated %d", tc.fixture, len(real.GPUs), len(sim.GPUs))
		}
		for i, r := range real.GPUs {
			s := sim.GPUs[i]
			if r.Index != s.Index || r.Name != s.Name || r.MemoryMiB != s.MemoryMiB || r.NUMANode != s.NUMANode {
				t.Errorf("%s GPU %d: real %+v, simulated %+v", tc.fixture, i, r, s)
			}
		}
		for i := range real.GPULinks {
			if !slices.Equal(real.GPULinks[i], sim.GPULinks[i]) {
				t.Errorf("%s GPU%d links: real %v, simulated %v", tc.fixture, i, real.GPULinks[i], sim.GPULinks[i])
			}
		}
	}
}

func hasNIC(inv discover.Inventory, numa int) bool {
	return slices.ContainsFunc(inv.NICs, func(n discover.NIC) bool { return n.NUMANode == numa })
}

// WriteDir puts the same tree on disk, for --sysfs-root.
func TestWriteDir(t *testing.T) {
	m, err := fake.New("node-1", pcie4())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	src := m.Sources()
	src.Sys, src.Proc = os.DirFS(filepath.Join(dir, "sys")), os.DirFS(filepath.Join(dir, "proc"))
	onDisk, err := discover.Discover(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	inMemory := discoverMachine(t, pcie4())
	if onDisk.CPUs != inMemory.CPUs || len(onDisk.GPUs) != 4 || !reflect.DeepEqual(onDisk.GPUs[3], inMemory.GPUs[3]) || len(onDisk.NICs) != 1 {
		t.Errorf("on disk %+v", onDisk)
	}
}

func TestCpuset(t *testing.T) {
	s := fake.DGXH100()
	s.Cpuset = "0-3,112-115"
	inv := discoverMachine(t, s)
	if inv.CPUs != 8 || inv.NUMANodes[0].Cores != 4 || len(inv.NUMANodes[1].CPUs) != 0 {
		t.Errorf("%d CPUs, %+v", inv.CPUs, inv.NUMANodes)
	}
}

func TestUUIDs(t *testing.T) {
	a1, _ := fake.New("a", fake.DGXH100())
	a2, _ := fake.New("a", fake.DGXH100())
	b, _ := fake.New("b", fake.DGXH100())
	q := []string{"--query-gpu=uuid", "--format=csv,noheader"}
	ua1, _ := a1.SMI(context.Background(), q...)
	ua2, _ := a2.SMI(context.Background(), q...)
	ub, _ := b.SMI(context.Background(), q...)
	lines := strings.Split(strings.TrimSpace(string(ua1)), "\n")
	slices.Sort(lines)
	if string(ua1) != string(ua2) || string(ua1) == string(ub) || len(slices.Compact(lines)) != 8 {
		t.Errorf("UUIDs not stable per host and distinct per GPU:\n%s\n%s", ua1, ub)
	}
}

func TestSMIFormats(t *testing.T) {
	m, err := fake.New("node-1", pcie4())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := m.SMI(ctx, "--query-gpu=index,gpu_name,memory.total,pci.bus_id", "--format=csv")
	if err != nil || !strings.HasPrefix(string(out), "index, gpu_name, memory.total [MiB], pci.bus_id\n0, NVIDIA L40S, 46068 MiB, 00000000:18:00.0\n") {
		t.Errorf("%v\n%s", err, out)
	}
	out, err = m.SMI(ctx, "--query-gpu=index,clocks.sm", "--format=csv,noheader")
	if err == nil || string(out) != "Field \"clocks.sm\" is not a valid field to query.\n\n" {
		t.Errorf("unknown field: %v %q", err, out)
	}
	if _, err := m.SMI(ctx, "-L"); err == nil {
		t.Error("unsupported arguments answered")
	}
	cpu, _ := fake.New("cpu-1", cpuOnly())
	if out, err := cpu.SMI(ctx, "topo", "-m"); err == nil || !strings.Contains(string(out), "No devices were found") {
		t.Errorf("CPU-only: %v %q", err, out)
	}
}

// A lost GPU makes discovery fail, as nvidia-smi failing does on a real
// node: a GPU node must not register as a CPU node.
func TestLostGPUFailsDiscovery(t *testing.T) {
	m, _ := fake.New("node-1", fake.DGXH100())
	if err := m.SetFault(5, fake.Fault{Lost: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := discover.Discover(context.Background(), m.Sources()); err == nil {
		t.Error("discovered a machine whose nvidia-smi fails")
	}
	if err := m.SetFault(5, fake.Fault{}); err != nil {
		t.Fatal(err)
	}
	if _, err := discover.Discover(context.Background(), m.Sources()); err != nil {
		t.Errorf("after mending: %v", err)
	}
	if err := m.SetFault(8, fake.Fault{Lost: true}); err == nil {
		t.Error("fault on a GPU the machine does not have")
	}
}

func TestShapeValidate(t *testing.T) {
	ok := fake.DGXH100()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*fake.Shape){
		"no sockets":          func(s *fake.Shape) { s.Sockets = 0 },
		"uneven NUMA split":   func(s *fake.Shape) { s.NUMANodes = 3 },
		"nine threads":        func(s *fake.Shape) { s.ThreadsPerCore = 9 },
		"too many CPUs":       func(s *fake.Shape) { s.CoresPerSocket = 1024; s.Sockets = 8 },
		"comma in GPU name":   func(s *fake.Shape) { s.GPUName = "H100, 80GB" },
		"no GPU memory":       func(s *fake.Shape) { s.GPUMemoryMiB = 0 },
		"too many GPUs":       func(s *fake.Shape) { s.GPUsPerNUMA = 33 },
		"no memory":           func(s *fake.Shape) { s.MemoryMiBPerNUMA = 0 },
		"cpuset out of range": func(s *fake.Shape) { s.Cpuset = "0-224" },
		"bad cpuset":          func(s *fake.Shape) { s.Cpuset = "0-x" },
		"NV1000":              func(s *fake.Shape) { s.NVLinks = 1000 },
	} {
		s := fake.DGXH100()
		mutate(&s)
		if _, err := fake.New("n", s); !errors.Is(err, fake.ErrInvalidShape) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The stub answers the health poll too, so faults set here reach the
// health checker as a real machine's would.
func TestFaultsReachHealthChecker(t *testing.T) {
	m, _ := fake.New("node-1", fake.DGXH100())
	inv, err := discover.Discover(context.Background(), m.Sources())
	if err != nil {
		t.Fatal(err)
	}
	c, err := health.NewChecker(inv.GPUs, m.SMI)
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Check(context.Background())
	if err != nil || !first.Healthy() || len(first.Notes) != 0 {
		t.Fatalf("%v %+v", err, first)
	}
	for i, f := range map[int]fake.Fault{2: {UncorrectableECC: 3}, 5: {Lost: true}, 6: {RemapPending: true}} {
		if err := m.SetFault(i, f); err != nil {
			t.Fatal(err)
		}
	}
	second, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ch := health.Diff(first, second)
	var got []string
	for _, g := range ch.BecameUnhealthy {
		got = append(got, g.Reason())
	}
	want := []string{"3 uncorrectable ECC errors", "fell off the bus (nvidia-smi: GPU is lost", "rows wait for remapping"}
	if len(got) != len(want) {
		t.Fatalf("became unhealthy: %q", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%q lacks %q", got[i], want[i])
		}
	}
}
