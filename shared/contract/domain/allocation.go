package domain

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// AllocState is the phase of an allocation in etcd.
type AllocState string

const (
	// AllocReserved: claims are held under the reservation lease; ranks are
	// launching. Expires with the lease.
	AllocReserved AllocState = "reserved"
	// AllocRunning: every rank started; claims are detached from the lease
	// and live until the job ends or a node of it is lost.
	AllocRunning AllocState = "running"
)

// Allocation is the etcd record of a gang's claims (key store.AllocKey).
type Allocation struct {
	JobID     string     `json:"jobId"`
	Attempt   int        `json:"attempt"`
	State     AllocState `json:"state"`
	Placement Placement  `json:"placement"`
	// WholeNodes lists the placement's nodes whose every GPU the gang holds:
	// each is claimed by one key for the whole node instead of one key per
	// GPU (store.ClaimKeys), which is most of a gang's etcd writes saved.
	// Gang sets it from the nodes' registrations at reservation.
	WholeNodes []string `json:"wholeNodes,omitempty"`
	// Lease is the reservation lease the claims were written under.
	Lease      int64     `json:"lease"`
	ReservedAt time.Time `json:"reservedAt"`
	// LaunchDeadline: if not every rank runs by then, the gang is released.
	LaunchDeadline time.Time `json:"launchDeadline"`
	// Started and Exited record agent reports per node.
	Started map[string]bool `json:"started,omitempty"`
	Exited  map[string]int  `json:"exited,omitempty"`
	// NodeEpochs pins each node's registration at reservation time.
	NodeEpochs map[string]int64 `json:"nodeEpochs"`
	// TraceParent is the W3C traceparent of the reservation, so work on the
	// allocation that no message carries (launch timeout, node loss) joins
	// the job's trace.
	TraceParent string `json:"traceParent,omitempty"`
	// Batch is set for a batch job (spec.batch): only node rank 0 runs a
	// process (the script), the other nodes hold their share for its
	// steps, and the gang has exited when node rank 0 has.
	Batch bool `json:"batch,omitempty"`
	// Pull is set for a container job: its pull phase (pull.go). While it
	// is pending no rank starts, and LaunchDeadline is past its deadline;
	// when it ends, LaunchDeadline is set anew: the launch timeout starts
	// after the pull.
	Pull *PullPhase `json:"pull,omitempty"`
}

// AllStarted reports whether every node of the gang reported started.
func (a Allocation) AllStarted() bool {
	for _, np := range a.Placement.Nodes {
		if !a.Started[np.Node] {
			return false
		}
	}
	return true
}

// WholeSet is WholeNodes as a set: the nodes the allocation claims as a
// whole. Built once per loop over the placement's nodes (a search of the
// list per node would cost n² compares: 260k for a gang of 512 nodes).
func (a Allocation) WholeSet() map[string]bool {
	set := make(map[string]bool, len(a.WholeNodes))
	for _, n := range a.WholeNodes {
		set[n] = true
	}
	return set
}

// AllExited reports whether every node reported its ranks exited; for a
// batch job, whether node rank 0 (the script's) did: the other nodes run
// nothing of their own and never exit.
func (a Allocation) AllExited() bool {
	for _, np := range a.Placement.Nodes {
		if a.Batch && np.NodeRank != 0 {
			continue
		}
		if _, ok := a.Exited[np.Node]; !ok {
			return false
		}
	}
	return true
}

// Assignment is what one node must run for a gang (key store.AssignKey).
// It carries everything the agent needs, so agents never read job records.
type Assignment struct {
	JobID      string            `json:"jobId"`
	Attempt    int               `json:"attempt"`
	Epoch      int64             `json:"epoch"`
	Node       string            `json:"node"`
	NodeRank   int               `json:"nodeRank"`
	NNodes     int               `json:"nnodes"`
	WorldSize  int               `json:"worldSize"`
	MasterAddr string            `json:"masterAddr"`
	MasterPort int               `json:"masterPort"`
	Ranks      []Rank            `json:"ranks"`
	Command    []string          `json:"command"`
	Env        map[string]string `json:"env,omitempty"`
	// RestartCount is how many times the job was requeued before this
	// attempt; Resume is the checkpoint to resume from (nil: start fresh).
	RestartCount  int            `json:"restartCount"`
	Resume        *CheckpointRef `json:"resume,omitempty"`
	CheckpointDir string         `json:"checkpointDir,omitempty"`
	// Workdir is where ranks run; empty means the attempt's own directory.
	Workdir string `json:"workdir,omitempty"`
	// TraceParent is the W3C traceparent of the reservation: the agent's
	// launch span continues the job's trace from it.
	TraceParent string `json:"traceParent,omitempty"`
	// Owner is the job's owner: the local account the agent runs the ranks
	// as when it runs as root. Empty (a cluster without auth): the ranks run
	// as the agent's own user, as they always did.
	Owner string `json:"owner,omitempty"`
	// GPUBind is the spec's gang.gpuBind ("closest", or "" for none): with
	// closest, a rank given GPUs but no cores still runs, and takes its
	// memory, on its GPUs' NUMA node.
	GPUBind string `json:"gpuBind,omitempty"`
	// Array is the job record's: set when the job is a task of an array
	// (the ranks' SLURM_ARRAY_* variables).
	Array *ArrayTask `json:"array,omitempty"`

	// What the environment Slurm scripts read needs (SLURM_JOB_NAME,
	// SLURM_JOB_PARTITION, SLURM_JOB_NODELIST, SLURM_CPUS_PER_TASK):
	// the job's name and queue, the gang's nodes by node rank, and the
	// spec's gang.cpusPerTask.
	JobName     string   `json:"jobName,omitempty"`
	Queue       string   `json:"queue,omitempty"`
	Nodes       []string `json:"nodes,omitempty"`
	CPUsPerTask int      `json:"cpusPerTask,omitempty"`
	// Batch is the spec's batch (nil: not a batch job). Node rank 0 runs
	// the script; the other nodes start nothing but hold their share for
	// its steps.
	Batch *jobspec.Batch `json:"batch,omitempty"`
	// Container, when set, runs each rank in a container (the spec's, with
	// its defaults).
	Container *jobspec.Container `json:"container,omitempty"`
	// PullOnly, on a container job's assignment, says the gang is in its
	// pull phase: make the image present, report pulled, start nothing.
	// Gang clears it on every node of the gang at once (pull.go).
	PullOnly bool `json:"pullOnly,omitempty"`
}

// Claim is the value of a GPU or port claim key.
type Claim struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
}
