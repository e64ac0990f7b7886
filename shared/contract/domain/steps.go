package domain

import "slices"

// A batch job's steps (srun inside its script): the script's node sends a
// StepLaunch to every node of the step; each runs its tasks and sends
// their output and exits back as StepOutput. Every receiver checks a
// launch against its own assignment (etcd's word), never the message's:
// see services/agent/steps_recv.go.

// StepLaunch asks one node to run its tasks of a step.
type StepLaunch struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	Step    int    `json:"step"`
	// Nodes are the step's nodes in step order; Tasks how many tasks each
	// runs, task IDs numbered in that order from 0.
	Nodes []string `json:"nodes"`
	Tasks []int    `json:"tasks"`
	// Argv is the command each task runs; Env what srun exports to them
	// (its caller's environment, or what --export names).
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
}

// Step output kinds.
const (
	StepStdout  = "stdout"
	StepStderr  = "stderr"
	StepExit    = "exit"    // a task ended, with Code
	StepRefused = "refused" // the node runs none of its tasks; Error says why
)

// StepOutput is a line of a task's output, its exit, or a node's refusal.
type StepOutput struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	Step    int    `json:"step"`
	Task    int    `json:"task"`
	Kind    string `json:"kind"`
	Line    string `json:"line,omitempty"`
	Code    int    `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
}

// StepKill ends a step's tasks on the receiving node, or, with Signal,
// sends them that signal: one srun caught and forwards, as Slurm's srun
// does (a batch script's checkpoint trap relays SIGUSR1 to its step so).
type StepKill struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	Step    int    `json:"step"`
	Signal  string `json:"signal,omitempty"`
}

// stepSignals are the signals srun forwards to a step's tasks; the others
// that reach it (SIGINT, SIGTERM) end the step.
var stepSignals = []string{"SIGCONT", "SIGHUP", "SIGUSR1", "SIGUSR2"}

// IsStepSignal reports whether srun forwards the signal named so.
func IsStepSignal(name string) bool { return slices.Contains(stepSignals, name) }

// MaxStepTasks bounds a step's tasks on one node.
const MaxStepTasks = 1024

// DecodeStepLaunch decodes and checks a launch's form; whether its node
// may run it is the receiver's to check against its assignment.
func DecodeStepLaunch(data []byte) (StepLaunch, error) {
	return decode("step launch", data, func(c *checker, l *StepLaunch) {
		c.jobID("jobId", l.JobID)
		c.attempt("attempt", l.Attempt)
		c.between("step", l.Step, 0, 1<<30)
		c.between("nodes", len(l.Nodes), 1, MaxNodes)
		c.between("tasks", len(l.Tasks), len(l.Nodes), len(l.Nodes))
		for i, n := range l.Nodes {
			c.node("nodes", n)
			if i < len(l.Tasks) {
				c.between("tasks", l.Tasks[i], 1, MaxStepTasks)
			}
		}
		c.argv("argv", l.Argv)
		c.env("env", l.Env)
	})
}

// DecodeStepOutput decodes and checks a step output message.
func DecodeStepOutput(data []byte) (StepOutput, error) {
	return decode("step output", data, func(c *checker, o *StepOutput) {
		c.jobID("jobId", o.JobID)
		c.attempt("attempt", o.Attempt)
		c.between("step", o.Step, 0, 1<<30)
		c.between("task", o.Task, 0, MaxNodes*MaxStepTasks)
		c.oneOf("kind", o.Kind, StepStdout, StepStderr, StepExit, StepRefused)
		c.text("line", o.Line, 64<<10)
		c.between("code", o.Code, 0, 255)
		c.text("error", o.Error, 4096)
	})
}

// DecodeStepKill decodes and checks a step kill.
func DecodeStepKill(data []byte) (StepKill, error) {
	return decode("step kill", data, func(c *checker, k *StepKill) {
		c.jobID("jobId", k.JobID)
		c.attempt("attempt", k.Attempt)
		c.between("step", k.Step, 0, 1<<30)
		if k.Signal != "" {
			c.oneOf("signal", k.Signal, stepSignals...)
		}
	})
}
