package domain

import "github.com/lockstep-dev/lockstep/shared/contract/jobspec"

// ReasonJobArrayTaskLimit: the task's array already has its
// array.maxConcurrent tasks placed or running (Slurm's name).
const ReasonJobArrayTaskLimit = "JobArrayTaskLimit"

// ArrayTask is what a job record (and each assignment of it) knows of the
// array it is a task of: admission writes it when it expands the array,
// and the agent sets the SLURM_ARRAY_* variables from it.
type ArrayTask struct {
	// JobID is the array's ID, the job's is TaskID(JobID, Index).
	JobID string `json:"jobId"`
	Index int    `json:"index"`
	// Count, Min and Max describe the whole array's indexes; Step is
	// their step when they are one stepped range, else 0.
	Count int `json:"count"`
	Min   int `json:"min"`
	Max   int `json:"max"`
	Step  int `json:"step,omitempty"`
	// MaxConcurrent is the spec's array.maxConcurrent (0: no limit).
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
}

// ArrayTasks describes every task of an array of the given (sorted,
// unique) indexes, in order.
func ArrayTasks(arrayID string, indexes []int, maxConcurrent int) []ArrayTask {
	if len(indexes) == 0 {
		return nil
	}
	step, ok := jobspec.ArrayStep(indexes)
	if !ok {
		step = 0
	}
	out := make([]ArrayTask, len(indexes))
	for i, idx := range indexes {
		out[i] = ArrayTask{JobID: arrayID, Index: idx, Count: len(indexes), Min: indexes[0], Max: indexes[len(indexes)-1],
			Step: step, MaxConcurrent: maxConcurrent}
	}
	return out
}

// ID is the task's job ID.
func (t ArrayTask) ID() string { return jobspec.TaskID(t.JobID, t.Index) }

// arrayTask checks an array task against the job ID it is under.
func (c *checker) arrayTask(field, jobID string, t *ArrayTask) {
	if t == nil {
		return
	}
	if t.ID() != jobID {
		c.fail(field, "task %s of array %s is not job %s", quote(t.ID()), quote(t.JobID), quote(jobID))
	}
	c.between(field+".count", t.Count, 1, jobspec.MaxArrayTasks)
	c.between(field+".min", t.Min, 0, t.Index)
	c.between(field+".max", t.Max, t.Index, jobspec.MaxArrayIndex)
	c.between(field+".step", t.Step, 0, jobspec.MaxArrayIndex)
	c.between(field+".maxConcurrent", t.MaxConcurrent, 0, jobspec.MaxArrayTasks)
}
