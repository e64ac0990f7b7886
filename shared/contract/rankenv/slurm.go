package rankenv

import "strconv"

// The environment Slurm scripts read (sbatch(1) and srun(1), "OUTPUT
// ENVIRONMENT VARIABLES"), set for a batch script, every task of its
// steps, and every rank of a job that is not a batch job, so that scripts
// written for Slurm run unchanged. Array variables are in array.go.
const (
	SlurmJobID         = "SLURM_JOB_ID"
	SlurmJobName       = "SLURM_JOB_NAME"
	SlurmJobNodeList   = "SLURM_JOB_NODELIST"
	SlurmNNodes        = "SLURM_NNODES"
	SlurmJobNumNodes   = "SLURM_JOB_NUM_NODES"
	SlurmNTasks        = "SLURM_NTASKS"
	SlurmNTasksPerNode = "SLURM_NTASKS_PER_NODE"
	SlurmCPUsPerTask   = "SLURM_CPUS_PER_TASK"
	SlurmGPUsOnNode    = "SLURM_GPUS_ON_NODE"
	SlurmJobPartition  = "SLURM_JOB_PARTITION"
	SlurmSubmitDir     = "SLURM_SUBMIT_DIR"
	SlurmSubmitHost    = "SLURM_SUBMIT_HOST"
	SlurmClusterName   = "SLURM_CLUSTER_NAME"

	SlurmProcID       = "SLURM_PROCID"
	SlurmLocalID      = "SLURM_LOCALID"
	SlurmNodeID       = "SLURM_NODEID"
	SlurmStepID       = "SLURM_STEP_ID"
	SlurmStepNodeList = "SLURM_STEP_NODELIST"
	SlurmStepNumTasks = "SLURM_STEP_NUM_TASKS"
	SlurmStepNumNodes = "SLURM_STEP_NUM_NODES"
)

// ClusterName is SLURM_CLUSTER_NAME.
const ClusterName = "lockstep"

// SlurmJob is the job-level part: the same in the batch script and every
// task of the job on a node (GPUsOnNode is the node's).
type SlurmJob struct {
	JobID, JobName, Partition string
	// NodeList is the gang's nodes as a Slurm hostlist ("node-[01-02]").
	NodeList string
	// SubmitDir is the spec's SLURM_SUBMIT_DIR (sbatch sets it) or the
	// job's working directory; SubmitHost the spec's, or empty (unset).
	SubmitDir, SubmitHost                     string
	NNodes, NTasks, NTasksPerNode, GPUsOnNode int
	// CPUsPerTask is gang.cpusPerTask; 0 leaves SLURM_CPUS_PER_TASK unset,
	// as Slurm does without -c.
	CPUsPerTask int
}

// SlurmTask is one task's part. Step is nil for the batch script itself.
type SlurmTask struct {
	ProcID, LocalID, NodeID int
	Step                    *SlurmStep
}

// SlurmStep is the step a task belongs to: steps are numbered per job
// from 0; a job that is not a batch job runs as step 0.
type SlurmStep struct {
	ID, NumTasks, NumNodes int
	NodeList               string
}

// list writes j, then t, as NAME=value.
func (j SlurmJob) list(t SlurmTask) []string {
	itoa := strconv.Itoa
	env := []string{
		SlurmClusterName + "=" + ClusterName,
		SlurmJobID + "=" + j.JobID,
		SlurmJobName + "=" + j.JobName,
		SlurmJobPartition + "=" + j.Partition,
		SlurmJobNodeList + "=" + j.NodeList,
		SlurmNNodes + "=" + itoa(j.NNodes),
		SlurmJobNumNodes + "=" + itoa(j.NNodes),
		SlurmNTasks + "=" + itoa(j.NTasks),
		SlurmNTasksPerNode + "=" + itoa(j.NTasksPerNode),
		SlurmGPUsOnNode + "=" + itoa(j.GPUsOnNode),
		SlurmSubmitDir + "=" + j.SubmitDir,
	}
	if j.SubmitHost != "" {
		env = append(env, SlurmSubmitHost+"="+j.SubmitHost)
	}
	if j.CPUsPerTask > 0 {
		env = append(env, SlurmCPUsPerTask+"="+itoa(j.CPUsPerTask))
	}
	env = append(env, SlurmProcID+"="+itoa(t.ProcID), SlurmLocalID+"="+itoa(t.LocalID), SlurmNodeID+"="+itoa(t.NodeID))
	if s := t.Step; s != nil {
		env = append(env, SlurmStepID+"="+itoa(s.ID), SlurmStepNodeList+"="+s.NodeList,
			SlurmStepNumTasks+"="+itoa(s.NumTasks), SlurmStepNumNodes+"="+itoa(s.NumNodes))
	}
	return env
}

// slurmVars document the Slurm set (part of Vars).
var slurmVars = []Var{
	{SlurmClusterName, "`" + ClusterName + "`"},
	{SlurmJobID, "the job's ID (as `LOCKSTEP_JOB_ID`)"},
	{SlurmJobName, "the job's name (the spec's `name`, else its ID)"},
	{SlurmJobPartition, "the job's queue"},
	{SlurmJobNodeList, "the gang's nodes as a Slurm hostlist (`node-[01-02]`), in node-rank order; `scontrol show hostnames` expands it"},
	{SlurmNNodes, "nodes in the gang (`gang.nodes`)"},
	{SlurmJobNumNodes, "the same as `SLURM_NNODES`"},
	{SlurmNTasks, "tasks in the job: `gang.nodes` × `gang.tasksPerNode`"},
	{SlurmNTasksPerNode, "`gang.tasksPerNode`"},
	{SlurmGPUsOnNode, "the job's GPUs on this node (`gang.gpusPerNode`)"},
	{SlurmSubmitDir, "the spec's env `SLURM_SUBMIT_DIR` (sbatch sets it), else the job's working directory"},
	{SlurmSubmitHost, "the spec's env `SLURM_SUBMIT_HOST` (sbatch sets it); unset otherwise"},
	{SlurmCPUsPerTask, "`gang.cpusPerTask`; unset without one"},
	{SlurmProcID, "this task among the step's, from 0 (a rank's `RANK`); 0 in a batch script"},
	{SlurmLocalID, "this task among the step's on this node, from 0 (`LOCAL_RANK`); 0 in a batch script"},
	{SlurmNodeID, "this node among the job's, from 0 (`NODE_RANK`); 0 in a batch script"},
	{SlurmStepID, "the step (each `srun` of a batch script is one, numbered from 0; a job that is not a batch job is step 0); unset in the batch script"},
	{SlurmStepNodeList, "the step's nodes as a Slurm hostlist; unset in the batch script"},
	{SlurmStepNumTasks, "tasks in the step; unset in the batch script"},
	{SlurmStepNumNodes, "nodes in the step; unset in the batch script"},
}
