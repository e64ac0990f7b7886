package rankenv

import (
	"strconv"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// An array task's variables: Lockstep's, and the names Slurm gives them
// (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES").
const (
	ArrayJobID       = "LOCKSTEP_ARRAY_JOB_ID"
	ArrayTaskID      = "LOCKSTEP_ARRAY_TASK_ID"
	SlurmArrayJobID  = "SLURM_ARRAY_JOB_ID"
	SlurmArrayTaskID = "SLURM_ARRAY_TASK_ID"
	SlurmArrayCount  = "SLURM_ARRAY_TASK_COUNT"
	SlurmArrayMin    = "SLURM_ARRAY_TASK_MIN"
	SlurmArrayMax    = "SLURM_ARRAY_TASK_MAX"
	SlurmArrayStep   = "SLURM_ARRAY_TASK_STEP"
)

// arrayVars are the array task's rows of Vars.
var arrayVars = []Var{
	{ArrayJobID, "the array's ID, for a task of a job array (`array`); unset otherwise, like every variable below"},
	{ArrayTaskID, "this task's index in its array"},
	{SlurmArrayJobID, "the same as `LOCKSTEP_ARRAY_JOB_ID`"},
	{SlurmArrayTaskID, "the same as `LOCKSTEP_ARRAY_TASK_ID`"},
	{SlurmArrayCount, "tasks in the array"},
	{SlurmArrayMin, "the array's lowest index"},
	{SlurmArrayMax, "the array's highest index"},
	{SlurmArrayStep, "the step between indexes, set only when the array's indexes are one stepped range"},
}

// ArrayList is t's variables as exec takes them, NAME=value; none for a
// job that is no array task (t nil). The caller appends them after
// Env.List, so that they win over the spec's env as Lockstep's own do.
func ArrayList(t *domain.ArrayTask) []string {
	if t == nil {
		return nil
	}
	idx := strconv.Itoa(t.Index)
	out := []string{
		ArrayJobID + "=" + t.JobID,
		ArrayTaskID + "=" + idx,
		SlurmArrayJobID + "=" + t.JobID,
		SlurmArrayTaskID + "=" + idx,
		SlurmArrayCount + "=" + strconv.Itoa(t.Count),
		SlurmArrayMin + "=" + strconv.Itoa(t.Min),
		SlurmArrayMax + "=" + strconv.Itoa(t.Max),
	}
	if t.Step > 0 {
		out = append(out, SlurmArrayStep+"="+strconv.Itoa(t.Step))
	}
	return out
}
