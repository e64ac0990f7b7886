package jobspec

import "time"

// Defaults of the spec's optional fields, as schemas/jobspec.v1.json
// documents them (TestDefaultsMatchSchema keeps the two in step).
const (
	DefaultQueue       = "default"
	DefaultMaxRestarts = 3
	DefaultSignal      = "SIGUSR1"
	DefaultGrace       = 120 * time.Second
	DefaultAck         = "all"
	DefaultGPUBind     = "none"
	// DefaultSwitchWait is how long topology.maxSwitches is waited for
	// when the spec gives no waitForSwitches: Slurm's default
	// max_switch_wait.
	DefaultSwitchWait = 5 * time.Minute
	// DefaultBatchOutput and DefaultArrayBatchOutput are where a batch
	// script's output goes when batch.output is not given, as in Slurm.
	DefaultBatchOutput      = "slurm-%j.out"
	DefaultArrayBatchOutput = "slurm-%A_%a.out"
)

// WithDefaults is s with every default filled in: the one place the
// spec's defaults are decided. Parse applies it, so a parsed spec, and
// the job record made from it, holds every value and consumers read the
// fields. It is idempotent.
//
// A spec that was not parsed may lack them: a job record written before
// a default moved here (maxRestarts, signal, gracePeriod, ack, gpuBind,
// waitForSwitches were filled by their readers until then), or a spec
// built in code. Its readers get the same values through WithDefaults:
// MaxRestarts, Grace and Signal read through it, and so does
// place.RequestFor.
func (s Spec) WithDefaults() Spec {
	if s.Name == "" {
		s.Name = s.ID
	}
	if s.Queue == "" {
		s.Queue = DefaultQueue
	}
	s.Gang = s.Gang.withDefaults()
	s.RestartPolicy = s.RestartPolicy.withDefaults()
	s.Topology = s.Topology.withDefaults()
	s.Checkpoint = s.Checkpoint.withDefaults()
	if s.Container != nil {
		c := s.Container.WithDefaults()
		s.Container = &c
	}
	return s
}

func (g Gang) withDefaults() Gang {
	if g.TasksPerNode == 0 {
		g.TasksPerNode = g.GPUsPerNode // one rank per GPU
	}
	if g.GPUBind == "" {
		g.GPUBind = DefaultGPUBind
	}
	return g
}

func (r RestartPolicy) withDefaults() RestartPolicy {
	if r.MaxRestarts == nil {
		n := DefaultMaxRestarts
		r.MaxRestarts = &n
	}
	return r
}

func (t Topology) withDefaults() Topology {
	if t.MaxSwitches > 0 && t.WaitForSwitches.IsZero() {
		t.WaitForSwitches = DurationOf(DefaultSwitchWait)
	}
	return t
}

func (c Checkpoint) withDefaults() Checkpoint {
	if c.Signal == "" {
		c.Signal = DefaultSignal
	}
	if c.GracePeriod.IsZero() {
		c.GracePeriod = DurationOf(DefaultGrace)
	}
	if c.Ack == "" {
		c.Ack = DefaultAck
	}
	return c
}
