package rankenv

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// The exact environment of a rank, in order: the account's, the spec's
// (sorted), Lockstep's (which wins where a name repeats).
func TestForList(t *testing.T) {
	as := domain.Assignment{
		JobID: "train-1", Attempt: 3, Node: "n2", NodeRank: 1, NNodes: 2, WorldSize: 4,
		MasterAddr: "10.0.0.1", MasterPort: 29500, RestartCount: 2, CheckpointDir: "/ckpt",
		Resume: &domain.CheckpointRef{Path: "/ckpt/1200", Step: 1200},
		Env:    map[string]string{"RANK": "99", "EPOCHS": "3"},
		Ranks: []domain.Rank{
			{Rank: 2, LocalRank: 0, GPUs: []int{0, 1}, CPUs: []int{4, 5}},
			{Rank: 3, LocalRank: 1, GPUs: []int{2, 3}},
		},
	}
	env := For(as, as.Ranks[0])
	env.Path, env.Home, env.User, env.Shell = "/bin", "/home/ada", "ada", "/bin/sh"
	env.NATS, env.AgentSocket, env.AckToken, env.CheckpointAck = "nats://10.0.0.9:4222", "/run/agent.sock", "t0k", "/data/ack-2"
	want := []string{
		"PATH=/bin", "HOME=/home/ada", "USER=ada", "LOGNAME=ada", "SHELL=/bin/sh",
		"EPOCHS=3", "RANK=99",
		"LOCKSTEP_CPUS=4,5", "LOCKSTEP_AGENT_SOCKET=/run/agent.sock", "LOCKSTEP_ACK_TOKEN=t0k",
		"LOCKSTEP_NATS=nats://10.0.0.9:4222", "LOCKSTEP_RESTART_COUNT=2",
		"LOCKSTEP_RESUME_FROM=/ckpt/1200", "LOCKSTEP_RESUME_STEP=1200",
		"LOCKSTEP_CHECKPOINT_DIR=/ckpt", "LOCKSTEP_CHECKPOINT_ACK=/data/ack-2",
		"MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500", "WORLD_SIZE=4", "RANK=2", "LOCAL_RANK=0",
		"LOCAL_WORLD_SIZE=2", "NODE_RANK=1", "NNODES=2", "CUDA_VISIBLE_DEVICES=0,1",
		"LOCKSTEP_JOB_ID=train-1", "LOCKSTEP_ATTEMPT=3", "LOCKSTEP_NODE=n2",
	}
	if got := env.List(); !slices.Equal(got, want) {
		t.Errorf("List:\n got  %q\n want %q", got, want)
	}

	// No bound cores, no socket, nothing to resume: those are left out or
	// empty, never made up.
	env = For(as, as.Ranks[1])
	env.Resume = nil
	got := env.List()
	for _, kv := range []string{"LOCKSTEP_RESUME_FROM=", "LOCKSTEP_RESUME_STEP=", "CUDA_VISIBLE_DEVICES=2,3", "RANK=3", "LOCAL_RANK=1"} {
		if !slices.Contains(got, kv) {
			t.Errorf("%s missing from %q", kv, got)
		}
	}
	for _, kv := range got {
		for _, name := range []string{CPUs, AgentSocket, AckToken} {
			if strings.HasPrefix(kv, name+"=") {
				t.Errorf("%s set without a value to give: %q", name, kv)
			}
		}
	}
}

// Every variable List sets is in Vars, so in the docs.
func TestListIsDocumented(t *testing.T) {
	env := Env{CPUs: []int{0}, AgentSocket: "/s", Slurm: &SlurmJob{SubmitHost: "h", CPUsPerTask: 1},
		Task: SlurmTask{Step: &SlurmStep{}}}
	documented := map[string]bool{}
	for _, v := range Vars {
		documented[v.Name] = true
	}
	for _, kv := range env.List() {
		if name, _, _ := strings.Cut(kv, "="); !documented[name] {
			t.Errorf("%s is set but not in Vars", name)
		}
	}
}

func TestNICsAndGPUUUIDs(t *testing.T) {
	env := Env{GPUs: []int{4, 5}, GPUIDs: []string{"GPU-a", "GPU-b"}, NICs: []string{"mlx5_4", "mlx5_5"}}
	got := strings.Join(env.List(), "\n")
	for _, kv := range []string{"CUDA_VISIBLE_DEVICES=GPU-a,GPU-b", "NCCL_IB_HCA==mlx5_4,mlx5_5", "UCX_NET_DEVICES=mlx5_4:1,mlx5_5:1"} {
		if !strings.Contains(got, kv+"\n") {
			t.Errorf("no %s in\n%s", kv, got)
		}
	}
	// The spec's own NIC choice stands; without NICs neither is set.
	env.Spec = map[string]string{NCCLIBHCA: "mlx5_9"}
	if got := env.List(); slices.Contains(got, "NCCL_IB_HCA==mlx5_4,mlx5_5") || !slices.Contains(got, "NCCL_IB_HCA=mlx5_9") {
		t.Errorf("spec's NCCL_IB_HCA overridden: %q", got)
	}
	env.NICs, env.Spec = nil, nil
	if got := strings.Join(env.List(), "\n"); strings.Contains(got, NCCLIBHCA) || strings.Contains(got, UCXNetDevices) {
		t.Errorf("NIC variables without NICs: %s", got)
	}
}
