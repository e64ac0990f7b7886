//go:build !lockstep_client

package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

const discoverFixtures = "../../services/agent/discover/testdata"

// TestAgentDiscoverThisMachine: --discover reports this machine's real CPUs
// and NUMA nodes, with no NATS or etcd (none is running here).
func TestAgentDiscoverThisMachine(t *testing.T) {
	out, errOut, code := cli(t, "agent", "--discover", "-o", "json", "--nats", "nats://127.0.0.1:1", "--nvidia-smi", filepath.Join(t.TempDir(), "none"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var inv discover.Inventory
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// runtime.NumCPU counts the CPUs this process may run on: the same
	// online ∩ cpuset that discovery reports, also inside a container.
	if inv.CPUs != runtime.NumCPU() {
		t.Errorf("cpus %d, runtime.NumCPU %d", inv.CPUs, runtime.NumCPU())
	}
	var ids []int
	entries, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	for _, e := range entries {
		id, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(e), "node"))
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		ids = []int{0} // no NUMA in sysfs: one node 0 with every CPU
	}
	var got []int
	total := 0
	for _, n := range inv.NUMANodes {
		got = append(got, n.ID)
		total += len(n.CPUs)
	}
	if !slices.Equal(got, ids) || total != inv.CPUs {
		t.Errorf("NUMA nodes %v holding %d CPUs; sysfs has nodes %v, %d usable CPUs", got, total, ids, inv.CPUs)
	}
	if len(inv.GPUs) != 0 || !strings.Contains(strings.Join(inv.Notes, "\n"), "no GPUs") {
		t.Errorf("without nvidia-smi: gpus %v, notes %q", inv.GPUs, inv.Notes)
	}
}

// TestAgentDiscoverFixture: a fixture tree and its stub nvidia-smi give the
// fixture's GPUs on their NUMA nodes, in JSON and text.
func TestAgentDiscoverFixture(t *testing.T) {
	dir := filepath.Join(discoverFixtures, "dgx-h100")
	args := []string{"agent", "--discover", "--sysfs-root", filepath.Join(dir, "sys"), "--nvidia-smi", filepath.Join(dir, "nvidia-smi")}
	out, errOut, code := cli(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var inv discover.Inventory
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if inv.CPUs != 224 || len(inv.NUMANodes) != 2 || len(inv.GPUs) != 8 || len(inv.NICs) != 12 {
		t.Fatalf("cpus %d, %d NUMA nodes, %d GPUs, %d NICs", inv.CPUs, len(inv.NUMANodes), len(inv.GPUs), len(inv.NICs))
	}
	for _, g := range inv.GPUs {
		if want := g.Index / 4; g.NUMANode != want {
			t.Errorf("GPU %d on NUMA %d, want %d", g.Index, g.NUMANode, want)
		}
	}
	if inv.GPULinks.Between(0, 7).String() != "NV18" {
		t.Errorf("GPU0→GPU7 %v", inv.GPULinks.Between(0, 7))
	}

	out, _, code = cli(t, args...)
	if code != 0 || !strings.Contains(out, "GPU 7        NVIDIA H100 80GB HBM3, 81559 MiB, 0000:db:00.0, NUMA 1") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}

func TestAgentDiscoverRejects(t *testing.T) {
	if _, errOut, code := cli(t, "agent", "--discover", "-o", "yaml"); code == 0 || !strings.Contains(errOut, "-o") {
		t.Errorf("-o yaml: exit %d %s", code, errOut)
	}
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "devices/system/cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "devices/system/cpu/online"), []byte("0-x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, "agent", "--discover", "--sysfs-root", bad); code == 0 || !strings.Contains(errOut, "devices/system/cpu/online") {
		t.Errorf("malformed sysfs: exit %d %s", code, errOut)
	}
}

// Serving, the agent registers what discovery finds unless --gpus
// simulates GPUs; a negative --gpus is a usage error.
func TestAgentNodeHardware(t *testing.T) {
	dir := filepath.Join(discoverFixtures, "dgx-h100")
	d := discoverFlags{sysRoot: filepath.Join(dir, "sys"), smiPath: filepath.Join(dir, "nvidia-smi")}
	a := &app{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var cfg agent.Config
	if err := a.nodeHardware(context.Background(), &cfg, d, log); err != nil {
		t.Fatal(err)
	}
	n := cfg.Node
	if n.GPUs != 8 || n.CPUs != 224 || n.Simulated || n.GPUModel != "NVIDIA H100 80GB HBM3" || len(n.NUMA) != 2 || len(cfg.GPUUUIDs) != 8 {
		t.Errorf("registered %+v, UUIDs %v", n, cfg.GPUUUIDs)
	}
	sim := agent.Config{}
	sim.Node.GPUs = 8
	if err := a.nodeHardware(context.Background(), &sim, d, log); err != nil || !sim.Node.Simulated || sim.Node.NUMA != nil {
		t.Errorf("--gpus 8: %v %+v", err, sim.Node)
	}
	sim.Node.GPUs, sim.Node.Simulated = -1, false
	if err := a.nodeHardware(context.Background(), &sim, d, log); err == nil || !strings.Contains(err.Error(), "--gpus") {
		t.Errorf("--gpus -1: %v", err)
	}
	bad := discoverFlags{sysRoot: t.TempDir()}
	if err := a.nodeHardware(context.Background(), &agent.Config{}, bad, log); err == nil || !strings.Contains(err.Error(), "discovering this node's hardware") {
		t.Errorf("no sysfs: %v", err)
	}
}
