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
	TimeLimit     string            `json:"timeLimit,omitempty"`
	RestartPolicy RestartPolicy     `json:"restartPolicy"`
}

// Gang is the shape of the gang: nodes × gpusPerNode, split into
// tasksPerNode ranks per node.
type Gang struct {
	Nodes        int `json:"nodes"`
	GPUsPerNode  int `json:"gpusPerNode"`
	TasksPerNode int `json:"tasksPerNode,omitempty"`
	CPUsPerTask  int `json:"cpusPerTask,omitempty"`
}

// RestartPolicy bounds how often a job is requeued after losing its gang.
type RestartPolicy struct {
	MaxRestarts *int `json:"maxRestarts,omitempty"`
}

// Defaults.
const (
	DefaultQueue       = "default"
	DefaultMaxRestarts = 3
	// MaxSpecBytes bounds a submission; larger ones are rejected.
	MaxSpecBytes = 256 << 10
)

// GPUs is the gang's total GPU count.
func (s Spec) GPUs() int { return s.Gang.Nodes * s.Gang.GPUsPerNode }

// Ranks is the gang's world size.
func (s Spec) Ranks() int { return s.Gang.Nodes * s.Gang.TasksPerNode }

// GPUsPerTask is how many GPUs each rank gets.
func (s Spec) GPUsPerTask() int { return s.Gang.GPUsPerNode / s.Gang.TasksPerNode }

// MaxRestarts is the effective restart budget.
func (s Spec) MaxRestarts() int {
	if s.RestartPolicy.MaxRestarts == nil {
		return DefaultMaxRestarts
	}
	return *s.RestartPolicy.MaxRestarts
}

// Limit is the parsed time limit; zero means none.
func (s Spec) Limit() time.Duration {
	d, _ := time.ParseDuration(s.TimeLimit) // validated by Parse
	return d
}
