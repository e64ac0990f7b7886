package rankenv

import (
	"slices"
	"strings"
	"testing"
)

// A step task gets the job's Slurm set, then its own; the batch script
// has no step variables; optional ones are left out, never empty.
func TestSlurmList(t *testing.T) {
	job := &SlurmJob{JobID: "j-1", JobName: "llama", Partition: "default", NodeList: "node-[01-02]",
		SubmitDir: "/home/ada", SubmitHost: "login1", NNodes: 2, NTasks: 16, NTasksPerNode: 8, GPUsOnNode: 8, CPUsPerTask: 12}
	task := Env{Slurm: job, Task: SlurmTask{ProcID: 9, LocalID: 1, NodeID: 1,
		Step: &SlurmStep{ID: 2, NumTasks: 16, NumNodes: 2, NodeList: "node-[01-02]"}}}
	got := task.List()
	for _, kv := range []string{"SLURM_CLUSTER_NAME=lockstep", "SLURM_JOB_ID=j-1", "SLURM_JOB_NAME=llama",
		"SLURM_JOB_PARTITION=default", "SLURM_JOB_NODELIST=node-[01-02]", "SLURM_NNODES=2", "SLURM_JOB_NUM_NODES=2",
		"SLURM_NTASKS=16", "SLURM_NTASKS_PER_NODE=8", "SLURM_GPUS_ON_NODE=8", "SLURM_SUBMIT_DIR=/home/ada",
		"SLURM_SUBMIT_HOST=login1", "SLURM_CPUS_PER_TASK=12", "SLURM_PROCID=9", "SLURM_LOCALID=1", "SLURM_NODEID=1",
		"SLURM_STEP_ID=2", "SLURM_STEP_NODELIST=node-[01-02]", "SLURM_STEP_NUM_TASKS=16", "SLURM_STEP_NUM_NODES=2"} {
		if !slices.Contains(got, kv) {
			t.Errorf("%s missing from %q", kv, got)
		}
	}
	job.SubmitHost, job.CPUsPerTask = "", 0
	script := Env{Slurm: job}
	for _, kv := range script.List() {
		for _, name := range []string{SlurmSubmitHost, SlurmCPUsPerTask, SlurmStepID, SlurmStepNodeList, SlurmStepNumTasks, SlurmStepNumNodes} {
			if strings.HasPrefix(kv, name+"=") {
				t.Errorf("batch script without it gets %s", kv)
			}
		}
	}
	// Without a Slurm set, nothing of it.
	for _, kv := range (Env{}).List() {
		if strings.HasPrefix(kv, "SLURM_") {
			t.Errorf("SLURM_ variable without a Slurm set: %s", kv)
		}
	}
}
