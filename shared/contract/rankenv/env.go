package rankenv

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Env is one rank's environment, by meaning. For fills what the
// assignment decides; the node agent fills the rest (the account, where
// the bus and the agent are, the ack file). List writes it out.
type Env struct {
	// Path, Home, User (also LOGNAME) and Shell are the account's.
	Path, Home, User, Shell string
	// Spec is the spec's env. Every variable Lockstep sets wins over it:
	// a spec cannot fake its rank.
	Spec map[string]string

	// The torchrun set.
	MasterAddr     string
	MasterPort     int
	WorldSize      int
	Rank           int
	LocalRank      int
	LocalWorldSize int
	NodeRank       int
	NNodes         int
	// GPUs are CUDA_VISIBLE_DEVICES; CPUs, when any, LOCKSTEP_CPUS.
	GPUs, CPUs []int
	// GPUIDs, when set, name the same GPUs by UUID in CUDA_VISIBLE_DEVICES.
	GPUIDs []string
	// NICs, when any, are the rank's RDMA devices (NCCL_IB_HCA,
	// UCX_NET_DEVICES); the spec's env may name others.
	NICs []string

	JobID        string
	Attempt      int
	Node         string
	RestartCount int
	// Resume is the checkpoint to resume from; nil: starting fresh.
	Resume                       *domain.CheckpointRef
	CheckpointDir, CheckpointAck string
	// NATS is the bus's address, without credentials.
	NATS string
	// AgentSocket and AckToken are set together, or (no socket served)
	// neither is.
	AgentSocket, AckToken string

	// Slurm, when set, is the job's Slurm set (slurm.go), and Task this
	// task's part of it.
	Slurm *SlurmJob
	Task  SlurmTask
	// Array, when set, is the array task the job is (array.go).
	Array *domain.ArrayTask
}

// For is what the assignment gives r, one of its ranks.
func For(as domain.Assignment, r domain.Rank) Env {
	return Env{
		Spec:       as.Env,
		MasterAddr: as.MasterAddr, MasterPort: as.MasterPort,
		WorldSize: as.WorldSize, Rank: r.Rank, LocalRank: r.LocalRank, LocalWorldSize: len(as.Ranks),
		NodeRank: as.NodeRank, NNodes: as.NNodes,
		GPUs: r.GPUs, CPUs: r.CPUs,
		JobID: as.JobID, Attempt: as.Attempt, Node: as.Node,
		RestartCount: as.RestartCount, Resume: as.Resume, CheckpointDir: as.CheckpointDir,
		Array: as.Array,
	}
}

// List is the environment as exec takes it, NAME=value: the account's,
// then the spec's (sorted by name), then Lockstep's, so that where a name
// repeats Lockstep's value is the one the rank sees (os/exec keeps the
// last).
func (e Env) List() []string {
	env := make([]string, 0, 5+len(e.Spec)+24)
	env = append(env, Path+"="+e.Path, Home+"="+e.Home, User+"="+e.User, LogName+"="+e.User, Shell+"="+e.Shell)
	for _, k := range slices.Sorted(maps.Keys(e.Spec)) {
		env = append(env, k+"="+e.Spec[k])
	}
	if e.Slurm != nil {
		env = append(env, e.Slurm.list(e.Task)...)
	}
	if len(e.CPUs) > 0 {
		env = append(env, CPUs+"="+joinInts(e.CPUs))
	}
	// Which NICs is tuning, not identity: a spec that names its own keeps
	// them.
	if len(e.NICs) > 0 {
		if _, ok := e.Spec[NCCLIBHCA]; !ok {
			env = append(env, NCCLIBHCA+"=="+strings.Join(e.NICs, ","))
		}
		if _, ok := e.Spec[UCXNetDevices]; !ok {
			env = append(env, UCXNetDevices+"="+strings.Join(e.NICs, ":1,")+":1")
		}
	}
	visible := joinInts(e.GPUs)
	if e.GPUIDs != nil {
		visible = strings.Join(e.GPUIDs, ",")
	}
	if e.AgentSocket != "" {
		env = append(env, AgentSocket+"="+e.AgentSocket, AckToken+"="+e.AckToken)
	}
	resumeFrom, resumeStep := "", ""
	if e.Resume != nil {
		resumeFrom, resumeStep = e.Resume.Path, strconv.FormatInt(e.Resume.Step, 10)
	}
	return append(append(env,
		NATS+"="+e.NATS,
		RestartCount+"="+strconv.Itoa(e.RestartCount),
		ResumeFrom+"="+resumeFrom,
		ResumeStep+"="+resumeStep,
		CheckpointDir+"="+e.CheckpointDir,
		CheckpointAck+"="+e.CheckpointAck,
		MasterAddr+"="+e.MasterAddr,
		MasterPort+"="+strconv.Itoa(e.MasterPort),
		WorldSize+"="+strconv.Itoa(e.WorldSize),
		Rank+"="+strconv.Itoa(e.Rank),
		LocalRank+"="+strconv.Itoa(e.LocalRank),
		LocalWorldSize+"="+strconv.Itoa(e.LocalWorldSize),
		NodeRank+"="+strconv.Itoa(e.NodeRank),
		NNodes+"="+strconv.Itoa(e.NNodes),
		CUDAVisibleDevices+"="+visible,
		JobID+"="+e.JobID,
		Attempt+"="+strconv.Itoa(e.Attempt),
		Node+"="+e.Node,
	), ArrayList(e.Array)...)
}

// joinInts writes device and core indices as CUDA_VISIBLE_DEVICES does:
// comma-separated, no spaces.
func joinInts(xs []int) string {
	b := make([]byte, 0, 3*len(xs))
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}
