package sim

import (
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// Policy names a scheduling policy.
type Policy string

// The policies compared; see doc.go.
const (
	PerPod    Policy = "per-pod"
	GangBlind Policy = "gang"
	SlurmLike Policy = "slurm"
	Lockstep  Policy = "lockstep"
)

// Policies lists every policy, baselines first.
var Policies = []Policy{PerPod, GangBlind, SlurmLike, Lockstep}

// Describe is a one-line description of a policy for reports.
func (p Policy) Describe() string {
	switch p {
	case PerPod:
		return "Kubernetes default: pods placed one by one, no gang, topology-blind"
	case GangBlind:
		return "Volcano-like: gang, FIFO with skipping, topology-blind best fit"
	case SlurmLike:
		return "Slurm-like: gang, switch-tree best fit, FIFO main scheduler + EASY backfill every 30 s"
	case Lockstep:
		return "Lockstep: gang, topology-aware placement with bounded switch wait, EASY backfill on every event"
	}
	return string(p)
}

// ParsePolicy checks a policy name.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", errors.Newf("unknown policy %q (want per-pod, gang, slurm or lockstep)", s)
}

// Defaults.
const (
	DefaultLeafPenalty      = 0.05
	DefaultSpinePenalty     = 0.20
	DefaultWindow           = 64
	DefaultSwitchWait       = 15 * time.Minute
	DefaultBackfillInterval = 30 * time.Second
)

// Config is one simulation run.
type Config struct {
	Cluster *fabric.Cluster
	// Jobs, sorted by Submit.
	Jobs   []trace.Job
	Policy Policy
	Seed   uint64
	// LeafPenalty and SpinePenalty stretch a job's run time per extra leaf
	// and per extra spine its placement spans.
	LeafPenalty, SpinePenalty float64
	// Window bounds the pending jobs one scheduling pass considers.
	Window int
	// LimitFactor sets each job's time limit to its duration × factor; 0
	// gives no limits (backfill then only uses what the reservation leaves).
	LimitFactor float64
	// TimeLimit, when positive, is every job's time limit instead, as a
	// stream whose users all ask the same limit (issue 22's burst: 2 min
	// for jobs of 1–10 s) gives the policy no hint of which ends first.
	TimeLimit time.Duration
	// SwitchWait is how long Lockstep's multi-node jobs wait for their
	// fewest leaves; 0 asks for no topology constraint.
	SwitchWait time.Duration
	// BackfillInterval is Slurm's bf_interval.
	BackfillInterval time.Duration
	// Queues configures quotas, fair-share weights and the job-size
	// handicap (default: none, off).
	Queues queue.Config
	// Progress, when set, is called now and then with the jobs ended so far.
	Progress func(done, total int)
}

// WithDefaults fills unset knobs. Penalties, LimitFactor and SwitchWait
// keep 0 when set to a negative value (meaning "none").
func (c Config) WithDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.BackfillInterval == 0 {
		c.BackfillInterval = DefaultBackfillInterval
	}
	fill := func(v *float64, d float64) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	fill(&c.LeafPenalty, DefaultLeafPenalty)
	fill(&c.SpinePenalty, DefaultSpinePenalty)
	fill(&c.LimitFactor, 1)
	switch {
	case c.SwitchWait == 0:
		c.SwitchWait = DefaultSwitchWait
	case c.SwitchWait < 0:
		c.SwitchWait = 0
	}
	return c
}

// Validate checks a configuration (after WithDefaults).
func (c Config) Validate() error {
	switch {
	case c.Cluster == nil || len(c.Cluster.Nodes) == 0:
		return errors.New("simulation: no cluster")
	case c.Window < 1:
		return errors.Newf("simulation: window %d must be positive", c.Window)
	case c.BackfillInterval <= 0:
		return errors.New("simulation: backfill interval must be positive")
	case c.TimeLimit < 0:
		return errors.Newf("simulation: time limit %s is negative", c.TimeLimit)
	}
	if _, err := ParsePolicy(string(c.Policy)); err != nil {
		return err
	}
	for i := 1; i < len(c.Jobs); i++ {
		if c.Jobs[i].Submit < c.Jobs[i-1].Submit {
			return errors.Newf("simulation: jobs not sorted by submission (job %d)", i)
		}
	}
	return nil
}
