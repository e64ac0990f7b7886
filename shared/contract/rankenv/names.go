package rankenv

// The torchrun set: the names and meanings torch.distributed's env://
// rendezvous and torchrun use, so a training script runs under Lockstep
// as it does under torchrun.
const (
	MasterAddr         = "MASTER_ADDR"
	MasterPort         = "MASTER_PORT"
	WorldSize          = "WORLD_SIZE"
	Rank               = "RANK"
	LocalRank          = "LOCAL_RANK"
	LocalWorldSize     = "LOCAL_WORLD_SIZE"
	NodeRank           = "NODE_RANK"
	NNodes             = "NNODES"
	CUDAVisibleDevices = "CUDA_VISIBLE_DEVICES"
)

// The NICs a rank should use, as NCCL and UCX read them.
const (
	NCCLIBHCA     = "NCCL_IB_HCA"
	UCXNetDevices = "UCX_NET_DEVICES"
)

// Lockstep's own variables.
const (
	JobID         = "LOCKSTEP_JOB_ID"
	Attempt       = "LOCKSTEP_ATTEMPT"
	Node          = "LOCKSTEP_NODE"
	RestartCount  = "LOCKSTEP_RESTART_COUNT"
	ResumeFrom    = "LOCKSTEP_RESUME_FROM"
	ResumeStep    = "LOCKSTEP_RESUME_STEP"
	CheckpointDir = "LOCKSTEP_CHECKPOINT_DIR"
	CheckpointAck = "LOCKSTEP_CHECKPOINT_ACK"
	NATS          = "LOCKSTEP_NATS"
	AgentSocket   = "LOCKSTEP_AGENT_SOCKET"
	AckToken      = "LOCKSTEP_ACK_TOKEN"
	CPUs          = "LOCKSTEP_CPUS"
	// RankToken is set by the agent's rank supervisor, not by Env: it
	// marks every process of one rank's tree (descendants inherit it).
	RankToken = "LOCKSTEP_RANK_TOKEN"
)

// The account's variables: all a rank gets of a login environment.
const (
	Path    = "PATH"
	Home    = "HOME"
	User    = "USER"
	LogName = "LOGNAME"
	Shell   = "SHELL"
)

// DefaultPath is the PATH of ranks that run as another user than the
// agent: the agent's own PATH is its business (it may name directories
// only root should trust), and a login's PATH comes from the same list.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Var is one variable of the rank environment.
type Var struct {
	Name string
	// Meaning is one line of Markdown, as docs/interface.md shows it.
	Meaning string
}

// Vars is every variable a rank gets besides the spec's env, in the order
// docs/interface.md lists them.
var Vars = append([]Var{
	{MasterAddr, "address of node rank 0, where the rendezvous runs; the same for every rank of the job"},
	{MasterPort, "rendezvous port: the same for every rank of the job, distinct between jobs running on a host"},
	{WorldSize, "ranks in the job: `gang.nodes` × `gang.tasksPerNode`"},
	{Rank, "this rank, from 0"},
	{LocalRank, "this rank among its node's, from 0"},
	{LocalWorldSize, "ranks on this node (`gang.tasksPerNode`)"},
	{NodeRank, "this node in the gang, from 0; node rank 0 is `MASTER_ADDR`"},
	{NNodes, "nodes in the gang (`gang.nodes`)"},
	{CUDAVisibleDevices, "this rank's GPUs, comma-separated indices (UUIDs where the agent runs with `--visible-devices=uuid`); disjoint between ranks of a node"},
	{NCCLIBHCA, "the RDMA NICs closest to this rank's GPUs, `=mlx5_0,…` (exact names); set only on a node with NICs on those GPUs' NUMA nodes, and the spec's `env` may override it"},
	{UCXNetDevices, "the same NICs for UCX, `mlx5_0:1,…`; set and overridable as `NCCL_IB_HCA`"},
	{JobID, "the job's ID"},
	{Attempt, "the attempt, from 1; every requeue starts a new one"},
	{Node, "the node's name"},
	{RestartCount, "requeues before this attempt (`LOCKSTEP_ATTEMPT` − 1)"},
	{ResumeFrom, "path of the last acknowledged checkpoint to resume from; empty when starting fresh ([drain.md](drain.md))"},
	{ResumeStep, "that checkpoint's step; empty when starting fresh"},
	{CheckpointDir, "the spec's `checkpoint.dir`; empty without one"},
	{CheckpointAck, "the file this rank acknowledges a checkpoint in ([drain.md](drain.md))"},
	{NATS, "the bus's address, never credentials"},
	{AgentSocket, "the node agent's socket, which `lockstep ckpt-done` acknowledges through; set only when the agent serves one"},
	{AckToken, "the attempt's token `lockstep ckpt-done` sends with an ack (only that attempt's ranks have it); set with `LOCKSTEP_AGENT_SOCKET`"},
	{CPUs, "this rank's cores, comma-separated, which it is pinned to; set only with `gang.cpusPerTask`"},
	{RankToken, "marks every process of this rank's tree, for the agent to find what is left of it; not for the job's use"},
	{Path, "`" + DefaultPath + "` for a rank run as its owner; the agent's own when ranks run as the agent's user"},
	{Home, "home directory of the account the rank runs as"},
	{User, "name of the account the rank runs as"},
	{LogName, "the same as `USER`"},
	{Shell, "login shell of the account the rank runs as"},
	// An array task's (array.go).
	arrayVars[0], arrayVars[1], arrayVars[2], arrayVars[3], arrayVars[4], arrayVars[5], arrayVars[6], arrayVars[7],
}, slurmVars...)
