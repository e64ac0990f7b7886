package jobspec

import "time"

// Spec is a job as submitted. Field names follow schemas/jobspec.v1.json;
// TestSpecMatchesSchema keeps the two in step.
type Spec struct {
	ID            string            `json:"id,omitempty"`
	Name          string            `json:"name,omitempty"`
	Queue         string            `json:"queue,omitempty"`
	Priority      int               `json:"priority"`
	Gang          Gang              `json:"gang"`
	Command       []string          `json:"command"`
	Env           map[string]string `json:"env,omitempty"`
	Workdir       string            `json:"workdir,omitempty"`
	TimeLimit     Duration          `json:"timeLimit,omitzero"`
	RestartPolicy RestartPolicy     `json:"restartPolicy"`
	Topology      Topology          `json:"topology"`
	Checkpoint    Checkpoint        `json:"checkpoint"`
	// Dependencies hold the job pending until every one is satisfied
	// (Slurm --dependency; all must hold, as with Slurm's ","); Singleton
	// holds it while another job of the same name and owner is running
	// or was submitted before it and is still pending (Slurm singleton).
	Dependencies []Dependency `json:"dependencies,omitempty"`
	Singleton    bool         `json:"singleton,omitempty"`
}

// Dependency kinds, as Slurm names them.
const (
	// DependAfter: every listed job has started (or ended).
	DependAfter = "after"
	// DependAfterAny: every listed job has ended, in any way.
	DependAfterAny = "afterany"
	// DependAfterOK: every listed job has succeeded.
	DependAfterOK = "afterok"
	// DependAfterNotOK: every listed job has ended without succeeding
	// (failed, cancelled, timed out or rejected).
	DependAfterNotOK = "afternotok"
)

// Dependency is one condition on other jobs, all of the same owner.
type Dependency struct {
	Type string   `json:"type"`
	Jobs []string `json:"jobs"`
}

// MaxDependencyJobs bounds the job IDs one spec may name in all.
const MaxDependencyJobs = 256

// Gang is the shape of the gang: nodes × gpusPerNode, split into
// tasksPerNode ranks per node.
type Gang struct {
	Nodes        int `json:"nodes"`
	GPUsPerNode  int `json:"gpusPerNode"`
	TasksPerNode int `json:"tasksPerNode,omitempty"`
	CPUsPerTask  int `json:"cpusPerTask,omitempty"`
	// GPUBind is "closest" (GPUs and cores of a rank on one NUMA node) or
	// "none".
	GPUBind string `json:"gpuBind,omitempty"`
	// GPUType, when set, restricts the gang to nodes whose GPU model
	// contains these words, ignoring case ("H100" matches "NVIDIA H100
	// 80GB HBM3"); MinGPUMemoryMiB, when > 0, to nodes whose every GPU has
	// at least this much memory.
	GPUType         string `json:"gpuType,omitempty"`
	MinGPUMemoryMiB int64  `json:"minGPUMemoryMiB,omitempty"`
}

// Topology constrains placement over the switch tree.
type Topology struct {
	MaxSwitches     int      `json:"maxSwitches,omitempty"`
	WaitForSwitches Duration `json:"waitForSwitches,omitzero"`
	Required        string   `json:"required,omitempty"`
	Preferred       string   `json:"preferred,omitempty"`
	PreferredWait   Duration `json:"preferredWait,omitzero"`
}

// Checkpoint says how the job checkpoints when it must stop early.
type Checkpoint struct {
	Signal      string   `json:"signal,omitempty"`
	GracePeriod Duration `json:"gracePeriod,omitzero"`
	Dir         string   `json:"dir,omitempty"`
	// Ack is "all" (every rank acknowledges) or "rank0".
	Ack string `json:"ack,omitempty"`
}

// RestartPolicy bounds how often a job is requeued after losing its gang.
type RestartPolicy struct {
	MaxRestarts *int `json:"maxRestarts,omitempty"`
	// RequeueOnTimeLimit requeues (after a checkpoint) a job that reached
	// its time limit instead of ending it as timeout.
	RequeueOnTimeLimit bool `json:"requeueOnTimeLimit,omitempty"`
}

// MaxSpecBytes bounds a submission; larger ones are rejected.
const MaxSpecBytes = 256 << 10

// GPUs is the gang's total GPU count.
func (s Spec) GPUs() int { return s.Gang.Nodes * s.Gang.GPUsPerNode }

// Ranks is the gang's world size.
func (s Spec) Ranks() int { return s.Gang.Nodes * s.Gang.TasksPerNode }

// GPUsPerTask is how many GPUs each rank gets.
func (s Spec) GPUsPerTask() int { return s.Gang.GPUsPerNode / s.Gang.TasksPerNode }

// MaxRestarts is restartPolicy.maxRestarts. Like Grace and Signal it
// reads through the default, for a spec that was not parsed (see
// WithDefaults).
func (s Spec) MaxRestarts() int { return *s.RestartPolicy.withDefaults().MaxRestarts }

// Grace is checkpoint.gracePeriod.
func (s Spec) Grace() time.Duration { return s.Checkpoint.withDefaults().GracePeriod.Duration() }

// Signal is checkpoint.signal, the checkpoint signal's name.
func (s Spec) Signal() string { return s.Checkpoint.withDefaults().Signal }
