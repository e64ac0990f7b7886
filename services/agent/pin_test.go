package agent

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// A rank started pinned runs on its cores with its memory bound to its
// NUMA node from its first instruction; the agent's thread keeps its own.
// (Core 0 and NUMA node 0 exist on every machine.)
func TestStartPinnedCoresAndMemory(t *testing.T) {
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", "grep Cpus_allowed_list /proc/self/status; grep -m1 -o 'bind:[0-9,-]*' /proc/self/numa_maps")
	cmd.Stdout = &out
	pinErr, err := startPinned(cmd, rankPin{cpus: []int{0}, mems: []int{0}})
	if err != nil || pinErr != nil {
		t.Fatalf("%v / %v", err, pinErr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	got := out.String()
	if !strings.Contains(got, "Cpus_allowed_list:\t0\n") || !strings.Contains(got, "bind:0") {
		t.Errorf("rank saw:\n%s", got)
	}
	// A NUMA node this machine lacks: the rank still starts, unbound.
	cmd = exec.Command("true")
	pinErr, err = startPinned(cmd, rankPin{mems: []int{1023}})
	if err != nil || pinErr == nil {
		t.Errorf("absent NUMA node: %v / %v", err, pinErr)
	}
	_ = cmd.Wait()
	var mode int
	var mask nodeMask
	if err := getMempolicy(&mode, &mask); err != nil || mode != mpolDefault {
		t.Errorf("test thread's policy after: %d %v", mode, err)
	}
}

// The NICs and GPU names a rank is told come from the agent's own layout
// and UUIDs, for the GPUs its assignment gives it.
func TestRankEnvNICsAndUUIDs(t *testing.T) {
	hw := domain.Node{Name: "n1", GPUs: 4, CPUs: 4, NUMA: []domain.NUMANode{
		{ID: 0, GPUs: []int{0, 1}, CPUs: []int{0, 1}, NICs: []string{"mlx5_0", "mlx5_1"}},
		{ID: 1, GPUs: []int{2, 3}, CPUs: []int{2, 3}, NICs: []string{"mlx5_2", "mlx5_3"}},
	}}
	s := rankSetup{as: domain.Assignment{Node: "n1", Ranks: []domain.Rank{{GPUs: []int{3}}}}, hw: hw, node: "n1",
		uuids: []string{"GPU-0", "GPU-1", "GPU-2", "GPU-3"}}
	env := strings.Join(rankEnv(s, s.as.Ranks[0]), "\n") + "\n"
	for _, kv := range []string{"CUDA_VISIBLE_DEVICES=GPU-3\n", "NCCL_IB_HCA==mlx5_3\n", "UCX_NET_DEVICES=mlx5_3:1\n"} {
		if !strings.Contains(env, kv) {
			t.Errorf("no %q in\n%s", kv, env)
		}
	}
	s.uuids = nil
	if env := rankEnv(s, s.as.Ranks[0]); !slices.Contains(env, "CUDA_VISIBLE_DEVICES=3") {
		t.Errorf("by index: %q", env)
	}
}
