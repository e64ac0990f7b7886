package discover

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func mapFS(files map[string]string) fs.FS {
	m := fstest.MapFS{}
	for name, body := range files {
		m[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return m
}

// smallNode is a valid 2-CPU, 1-node tree with one GPU; each hostile case
// breaks one file.
func smallNode() map[string]string {
	return map[string]string{
		"devices/system/cpu/online":                             "0-1\n",
		"devices/system/cpu/cpu0/topology/thread_siblings_list": "0\n",
		"devices/system/cpu/cpu1/topology/thread_siblings_list": "1\n",
		"devices/system/node/node0/cpulist":                     "0-1\n",
		"devices/system/node/node0/meminfo":                     "Node 0 MemTotal:       8388608 kB\n",
		"bus/pci/devices/0000:18:00.0/numa_node":                "0\n",
		"class/infiniband/mlx5_0/device/numa_node":              "0\n",
		"class/infiniband/mlx5_0/ports/1/state":                 "4: ACTIVE\n",
	}
}

const goodCSV = "0, GPU-12345678-abcd-ef01-2345-6789abcdef01, NVIDIA H100 80GB HBM3, 81559, 00000000:18:00.0\n"
const goodTopo = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-1\t0\n"

func smiOf(csv, topo string) SMI {
	return func(_ context.Context, args ...string) ([]byte, error) {
		if args[0] == "topo" {
			return []byte(topo), nil
		}
		return []byte(csv), nil
	}
}

func TestDiscoverSmallNode(t *testing.T) {
	inv, err := Discover(context.Background(), Sources{Sys: mapFS(smallNode()), SMI: smiOf(goodCSV, goodTopo)})
	if err != nil || inv.CPUs != 2 || inv.NUMANodes[0].MemoryMiB != 8192 || len(inv.GPUs) != 1 || inv.GPUs[0].NUMANode != 0 || len(inv.NICs) != 1 || len(inv.Notes) != 0 {
		t.Fatalf("%v %+v", err, inv)
	}
}

// TestDiscoverRejectsHostileInput: a malformed value is an error that names
// where it came from, never a panic or a silently wrong inventory.
func TestDiscoverRejectsHostileInput(t *testing.T) {
	for _, tc := range []struct {
		file, body string // sysfs file to overwrite ("" for none)
		csv, topo  string
		wantInErr  string
	}{
		{"devices/system/cpu/online", "0-x\n", goodCSV, goodTopo, "devices/system/cpu/online"},
		{"devices/system/cpu/online", "", goodCSV, goodTopo, "no usable CPUs"},
		{"devices/system/node/node0/cpulist", "0-99999999\n", goodCSV, goodTopo, "node0/cpulist"},
		{"devices/system/node/node0/meminfo", "Node 0 MemTotal: lots kB\n", goodCSV, goodTopo, "node0/meminfo"},
		{"devices/system/node/node0/meminfo", "MemFree: 1 kB\n", goodCSV, goodTopo, "no MemTotal"},
		{"devices/system/cpu/cpu1/topology/thread_siblings_list", "0\n", goodCSV, goodTopo, "does not list cpu1"},
		{"bus/pci/devices/0000:18:00.0/numa_node", "zero\n", goodCSV, goodTopo, "0000:18:00.0/numa_node"},
		{"bus/pci/devices/0000:18:00.0/numa_node", "3\n", goodCSV, goodTopo, "not a NUMA node in"},
		{"class/infiniband/mlx5_0/ports/1/state", "ACTIVE\n", goodCSV, goodTopo, "mlx5_0/ports/1/state"},
		{"class/infiniband/mlx5_0/device/numa_node", "-7\n", goodCSV, goodTopo, "mlx5_0/device/numa_node"},
		{"devices/system/cpu/online", strings.Repeat("0,", 40000), goodCSV, goodTopo, "more than a sysfs file"},
		{"", "", "0, GPU-12345678-abcd, H100, 81559\n", goodTopo, "nvidia-smi --query-gpu output"},
		{"", "", "0, GPU-12345678-abcd, H100, lots, 00000000:18:00.0\n", goodTopo, "field memory.total"},
		{"", "", "0, not-a-uuid, H100, 81559, 00000000:18:00.0\n", goodTopo, "field uuid"},
		{"", "", "0, GPU-12345678-abcd, H100, 81559, 18:00.0\n", goodTopo, "field pci.bus_id"},
		{"", "", "0, GPU-12345678-abcd, H100, 81559, 00000000:18:00.9\n", goodTopo, "field pci.bus_id"},
		{"", "", "1, GPU-12345678-abcd, H100, 81559, 00000000:18:00.0\n", goodTopo, "index 1, want 0"},
		{"", "", "-1, GPU-12345678-abcd, H100, 81559, 00000000:18:00.0\n", goodTopo, "field index"},
		{"", "", "0, GPU-12345678-abcd, , 81559, 00000000:18:00.0\n", goodTopo, "field name"},
		{"", "", goodCSV, "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\n", "2 GPU columns"},
		{"", "", goodCSV, "\tGPU0\tCPU Affinity\nGPU0\tNV4\t0-1\n", "X marks exactly"},
		{"", "", goodCSV, "\tGPU0\tCPU Affinity\nGPU0\tQPI\t0-1\n", "unknown link"},
		{"", "", goodCSV, "\tGPU0\tCPU Affinity\n", "no row for GPU0"},
		{"", "", goodCSV, "\tGPU0\tCPU Affinity\nGPU0\n", "0 cells"},
		{"", "", goodCSV, "\tGPU0\tCPU Affinity\nGPU0\t X \nGPU0\t X \n", "repeated row"},
		{"", "", goodCSV, "garbage\n", "no header line"},
	} {
		files := smallNode()
		if tc.file != "" {
			files[tc.file] = tc.body
		}
		_, err := Discover(context.Background(), Sources{Sys: mapFS(files), SMI: smiOf(tc.csv, tc.topo)})
		if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
			t.Errorf("%s %q / csv %q / topo %q: err %v, want it to mention %q", tc.file, tc.body, tc.csv, tc.topo, err, tc.wantInErr)
		}
	}
}

// TestDiscoverMissingIsANote: absent optional sources give notes, not errors.
func TestDiscoverMissingIsANote(t *testing.T) {
	files := smallNode()
	delete(files, "devices/system/cpu/cpu0/topology/thread_siblings_list")
	delete(files, "bus/pci/devices/0000:18:00.0/numa_node")
	delete(files, "class/infiniband/mlx5_0/ports/1/state")
	for name := range files {
		if strings.HasPrefix(name, "devices/system/node/") {
			delete(files, name)
		}
	}
	inv, err := Discover(context.Background(), Sources{Sys: mapFS(files), SMI: smiOf(goodCSV, "")})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(inv.Notes, "\n")
	for _, want := range []string{"SMT siblings unknown", "no NUMA information", "GPU 0: the kernel reports no NUMA node; on node 0, the only one", "no port 1 state", "GPU links unknown"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	// One NUMA node (all CPUs on node 0): the GPU can only be on it.
	if inv.GPUs[0].NUMANode != 0 || inv.NICs[0].State != "UNKNOWN" || inv.NUMANodes[0].CPUs == nil {
		t.Errorf("%+v", inv)
	}
}

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:18:00.0": "0000:18:00.0",
		"00000000:DB:00.0": "0000:db:00.0",
		"0000:4a:00.0":     "0000:4a:00.0",
		"00010000:01:00.0": "10000:01:00.0", // VMD domain: the kernel's %04x keeps 5 digits
	} {
		if got, err := NormalizeBusID(in); err != nil || got != want {
			t.Errorf("NormalizeBusID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseLink(t *testing.T) {
	for in, want := range map[string]Link{"X": {Kind: LinkSelf}, "NV18": {Kind: LinkNVLink, NVLinks: 18}, "SOC": {Kind: LinkSys}, "NODE": {Kind: LinkNode}} {
		if got, err := ParseLink(in); err != nil || got != want {
			t.Errorf("ParseLink(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"NV", "NV0", "NV-1", "NV018", "nv4", ""} {
		if _, err := ParseLink(in); err == nil {
			t.Errorf("ParseLink(%q) accepted", in)
		}
	}
	if !(Link{Kind: LinkNVLink, NVLinks: 18}).Closer(Link{Kind: LinkNVLink, NVLinks: 12}) || !(Link{Kind: LinkPIX}).Closer(Link{Kind: LinkSys}) || (Link{Kind: LinkSys}).Closer(Link{Kind: LinkNode}) {
		t.Error("Closer ordering")
	}
}

// FuzzParseTopo and FuzzParseGPUCSV: hostile nvidia-smi output never panics.
func FuzzParseTopo(f *testing.F) {
	f.Add([]byte(goodTopo), 1)
	f.Add([]byte("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n"), 2)
	f.Fuzz(func(t *testing.T, out []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		m, err := parseTopo(out, n)
		if err == nil && len(m) != n {
			t.Fatalf("%d rows for %d GPUs", len(m), n)
		}
		if near := parseNearNICs(out, n); len(near) != n {
			t.Fatalf("near NICs for %d of %d GPUs", len(near), n)
		}
	})
}

func FuzzParseGPUCSV(f *testing.F) {
	f.Add([]byte(goodCSV))
	f.Fuzz(func(t *testing.T, out []byte) {
		gpus, _, err := parseGPUCSV(out)
		for i, g := range gpus {
			if err == nil && (g.Index != i || g.PCIBusID == "") {
				t.Fatalf("%+v", g)
			}
		}
	})
}

// With two NUMA nodes, a GPU whose node the kernel does not report stays
// unknown (-1): guessing would pin its ranks to the wrong memory.
func TestDiscoverGPUOfUnknownNodeOnTwoNodes(t *testing.T) {
	files := smallNode()
	files["devices/system/cpu/online"] = "0-3\n"
	files["devices/system/cpu/cpu2/topology/thread_siblings_list"] = "2\n"
	files["devices/system/cpu/cpu3/topology/thread_siblings_list"] = "3\n"
	files["devices/system/node/node1/cpulist"] = "2-3\n"
	files["devices/system/node/node1/meminfo"] = "Node 1 MemTotal:       8388608 kB\n"
	files["bus/pci/devices/0000:18:00.0/numa_node"] = "-1\n"
	inv, err := Discover(context.Background(), Sources{Sys: mapFS(files), SMI: smiOf(goodCSV, goodTopo)})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.NUMANodes) != 2 || inv.GPUs[0].NUMANode != -1 || !strings.Contains(strings.Join(inv.Notes, "\n"), "GPU 0: NUMA node unknown (the kernel reports -1)") {
		t.Errorf("%+v", inv)
	}
}
