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
	// Batch, when set, makes the job a batch job as Slurm's sbatch runs
	// one: the whole gang is allocated at once, Batch.Script runs once, on
	// the gang's first node, and the other nodes' GPUs are held for the
	// steps the script launches (srun). The job ends when the script does.
	Batch *Batch `json:"batch,omitempty"`
	// Array, when set, makes the submission a job array: admission
	// expands it into one job per index (Slurm --array).
	Array *Array `json:"array,omitempty"`
	// Container, when set, runs every rank in a container made from an
	// image (container.go); a batch job's script and its srun steps' tasks
	// too.
	Container *Container `json:"container,omitempty"`
}

// Batch is a batch job's script and where its output goes.
type Batch struct {
	// Script is the script's text. The first node's agent writes it to
	// the attempt's directory and runs it with Command[1:] as its
	// arguments (Command[0] is its name, $0), by the interpreter its "#!"
	// line names (/bin/sh without one).
	Script string `json:"script"`
	// Output and Error are the files the script's stdout and stderr go
	// to: Slurm filename patterns (%j %x %u %N %A %a %%), relative to
	// workdir. Output defaults to DefaultBatchOutput
	// (DefaultArrayBatchOutput for an array task); Error to Output's file.
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Array is a job array: one job per index, at most MaxConcurrent of them
// placed at once.
type Array struct {
	// Indexes is Slurm's --array list without the "%" limit: indexes N,
	// ranges N-M and stepped ranges N-M:S, comma-separated ("0-15",
	// "1,3,10-20:5").
	Indexes string `json:"indexes"`
	// MaxConcurrent bounds the tasks running at once (Slurm's "%N");
	// 0: no bound. Tasks over it pend with reason JobArrayTaskLimit.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
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
