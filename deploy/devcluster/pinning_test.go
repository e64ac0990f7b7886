package devcluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// TestSeedJobPinnedLikeMetal runs the seed's job (2 nodes × 8 ranks,
// cpusPerTask 12, gpuBind closest) on dev nodes that discovery found to be
// DGX H100s, and checks what every rank process saw: its GPUs, its 12
// cores and its NIC all on one NUMA node of the node's discovered layout,
// and (where this machine has the cores) its CPU affinity within them.
func TestSeedJobPinnedLikeMetal(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 2, GPUsPerNode: 8})
	j, files := h.runRanks(`{"id":"seed","gang":{"nodes":2,"gpusPerNode":8,"tasksPerNode":8,"cpusPerTask":12,"gpuBind":"closest"},
		"command":["sh","-c","printf '%%s|%%s|%%s|%%s\n' \"$CUDA_VISIBLE_DEVICES\" \"$LOCKSTEP_CPUS\" \"$NCCL_IB_HCA\" \"$(grep Cpus_allowed_list /proc/self/status | cut -f2)\" > %s/rank-$RANK"]}`, 60*time.Second)
	layout := devcluster.SimulatedNodes(1, 8, 1)[0]
	if layout.GPUModel != "NVIDIA H100 80GB HBM3" || layout.CPUs != 224 || len(layout.NUMA) != 2 {
		t.Fatalf("dev node is no DGX H100: %+v", layout)
	}
	numaOf := func(has func(domain.NUMANode) bool) int {
		for _, d := range layout.NUMA {
			if has(d) {
				return d.ID
			}
		}
		return -1
	}
	ranks := 0
	for _, np := range j.Placement.Nodes {
		for _, r := range np.Ranks {
			ranks++
			f := strings.Split(files[r.Rank], "|")
			if len(f) != 4 {
				t.Fatalf("rank %d wrote %q", r.Rank, files[r.Rank])
			}
			gpus, cpus := ints(t, f[0]), ints(t, f[1])
			if !slices.Equal(gpus, r.GPUs) || !slices.Equal(cpus, r.CPUs) || len(gpus) != 1 || len(cpus) != 12 {
				t.Errorf("rank %d saw GPUs %v cores %v, placed GPUs %v cores %v", r.Rank, gpus, cpus, r.GPUs, r.CPUs)
				continue
			}
			numa := numaOf(func(d domain.NUMANode) bool { return slices.Contains(d.GPUs, gpus[0]) })
			for _, c := range cpus {
				if numaOf(func(d domain.NUMANode) bool { return slices.Contains(d.CPUs, c) }) != numa {
					t.Errorf("rank %d: core %d is not on its GPU %d's NUMA node %d", r.Rank, c, gpus[0], numa)
				}
			}
			nic := strings.TrimPrefix(f[2], "=")
			if numaOf(func(d domain.NUMANode) bool { return slices.Contains(d.NICs, nic) }) != numa {
				t.Errorf("rank %d: NCCL_IB_HCA %q is not on NUMA node %d", r.Rank, f[2], numa)
			}
			// Cores this machine has are the only ones it can pin to: where
			// any of the rank's exist, it runs on nothing else.
			if slices.ContainsFunc(cpus, func(c int) bool { return c < runtime.NumCPU() }) {
				allowed, err := discover.ParseCPUList(f[3])
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range allowed {
					if !slices.Contains(cpus, c) {
						t.Errorf("rank %d runs on core %d outside its cores %v", r.Rank, c, cpus)
					}
				}
			}
		}
	}
	if ranks != 16 {
		t.Errorf("%d ranks", ranks)
	}
}

// runRanks submits spec, whose one %s stands for a directory where every
// rank writes the file rank-$RANK, waits for the job to succeed and returns
// it with what each rank wrote (trimmed), by rank.
func (h *harness) runRanks(spec string, timeout time.Duration) (domain.Job, map[int]string) {
	h.t.Helper()
	out := h.t.TempDir()
	id := h.submit(fmt.Sprintf(spec, out))
	j := h.waitFor(id, timeout, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded {
		h.t.Fatalf("ended %s: %s", j.State, j.Reason)
	}
	files := map[int]string{}
	for _, np := range j.Placement.Nodes {
		for _, r := range np.Ranks {
			raw, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("rank-%d", r.Rank)))
			if err != nil {
				h.t.Fatal(err)
			}
			files[r.Rank] = strings.TrimSpace(string(raw))
		}
	}
	return j, files
}

func ints(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out = append(out, n)
	}
	return out
}

// With gpuBind closest and no cpusPerTask a rank has no cores of its own,
// but still runs on its GPU's NUMA node (every core of it, shared).
func TestClosestWithoutCoresRunsOnTheGPUsNode(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 1, GPUsPerNode: 8})
	j, files := h.runRanks(`{"id":"nocores","gang":{"nodes":1,"gpusPerNode":8,"gpuBind":"closest"},
		"command":["sh","-c","printf '%%s|%%s|%%s|%%s\n' \"$CUDA_VISIBLE_DEVICES\" \"$LOCKSTEP_CPUS\" \"$(grep Cpus_allowed_list /proc/self/status | cut -f2)\" \"$(grep -m1 -o 'bind:[0-9]*' /proc/self/numa_maps)\" > %s/rank-$RANK"]}`, 60*time.Second)
	layout := devcluster.SimulatedNodes(1, 8, 1)[0]
	for _, r := range j.Placement.Nodes[0].Ranks {
		f := strings.Split(files[r.Rank], "|")
		if len(f) != 4 || f[1] != "" {
			t.Fatalf("rank %d wrote %q", r.Rank, files[r.Rank])
		}
		var home domain.NUMANode
		for _, d := range layout.NUMA {
			if slices.Contains(d.GPUs, r.GPUs[0]) {
				home = d
			}
		}
		if !slices.ContainsFunc(home.CPUs, func(c int) bool { return c < runtime.NumCPU() }) {
			continue // none of that node's cores on this machine: unpinned
		}
		// This machine has NUMA node 0 at least: memory there is bound.
		if home.ID == 0 && f[3] != "bind:0" {
			t.Errorf("rank %d (GPU %d) memory policy %q, want bind:0", r.Rank, r.GPUs[0], f[3])
		}
		allowed, err := discover.ParseCPUList(f[2])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range allowed {
			if !slices.Contains(home.CPUs, c) {
				t.Errorf("rank %d (GPU %d, NUMA %d) runs on core %d", r.Rank, r.GPUs[0], home.ID, c)
			}
		}
	}
}

// TestGPUBindClosestPinsRanks checks gpuBind closest end to end: each rank's
// GPUs and cores come from one NUMA node of the simulated layout, the rank
// is told (CUDA_VISIBLE_DEVICES, LOCKSTEP_CPUS), and it runs pinned to those
// cores where this machine has them.
func TestGPUBindClosestPinsRanks(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 1, GPUsPerNode: 2})
	j, files := h.runRanks(`{"id":"pinned","gang":{"nodes":1,"gpusPerNode":2,"cpusPerTask":1,"gpuBind":"closest"},
		"command":["sh","-c","echo \"$CUDA_VISIBLE_DEVICES $LOCKSTEP_CPUS $(grep Cpus_allowed_list /proc/self/status | cut -f2)\" > %s/rank-$RANK"]}`, 30*time.Second)
	numa := devcluster.SimulatedNodes(1, 2, 1)[0].NUMA
	domainOf := func(list []int, x int) bool { return slices.Contains(list, x) }
	for _, r := range j.Placement.Nodes[0].Ranks {
		if len(r.GPUs) != 1 || len(r.CPUs) != 1 {
			t.Fatalf("rank %d got GPUs %v cores %v", r.Rank, r.GPUs, r.CPUs)
		}
		same := false
		for _, d := range numa {
			same = same || (domainOf(d.GPUs, r.GPUs[0]) && domainOf(d.CPUs, r.CPUs[0]))
		}
		if !same {
			t.Errorf("rank %d: GPU %d and core %d are on different NUMA nodes of %+v", r.Rank, r.GPUs[0], r.CPUs[0], numa)
		}
		f := strings.Fields(files[r.Rank])
		if len(f) != 3 || f[0] != strconv.Itoa(r.GPUs[0]) || f[1] != strconv.Itoa(r.CPUs[0]) {
			t.Errorf("rank %d saw %q, want GPU %d core %d", r.Rank, files[r.Rank], r.GPUs[0], r.CPUs[0])
			continue
		}
		if r.CPUs[0] < runtime.NumCPU() && f[2] != f[1] {
			t.Errorf("rank %d ran on cores %s, want pinned to %s", r.Rank, f[2], f[1])
		}
	}
}
