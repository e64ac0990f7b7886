package placement

import (
	"cmp"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Config configures a placement replica.
type Config struct {
	config.Base
	// ProposalTimeout is how long a proposal may stay unanswered before the
	// job is considered again.
	ProposalTimeout time.Duration
	// Topology is the operator's switch tree (a topology file); nil means
	// the tree comes from the nodes' labels. Where both exist, the file wins.
	Topology *topology.Topology
	// Queues holds quotas and fair-share weights.
	Queues queue.Config
	// Retention is how long the leader keeps a finished job's record in the
	// jobs KV (its events stay in the events stream until that stream's own
	// limit); 0 means jobs.DefaultRetention.
	Retention time.Duration
	// DependencyGrace is how long after its submission a job naming an ID
	// with no record waits for that record before it is cancelled as
	// DependencyNeverSatisfied (admission writes records concurrently, so
	// a job may be seen before one submitted just before it); 0 means
	// DefaultDependencyGrace.
	DependencyGrace time.Duration
	// LeaderTTL is the TTL of the election session: a standby takes over
	// this long after the leader stops renewing it (a crash, a partition);
	// 0 means store.DefaultNodeTTL. Whole seconds, at least 2 (etcd leases).
	LeaderTTL time.Duration
}

// DefaultDependencyGrace is Config.DependencyGrace's default.
const DefaultDependencyGrace = 30 * time.Second

// Validate checks the placement settings.
func (c *Config) Validate() error {
	return c.Base.ValidateWith(
		config.Require(c.Retention >= 0, "--retention: %s is negative", c.Retention),
		config.Require(c.DependencyGrace >= 0, "dependency grace: %s is negative", c.DependencyGrace),
		config.Require(c.ProposalTimeout >= 0, "--proposal-timeout: %s is negative", c.ProposalTimeout),
		config.LeaseTTL("--leader-ttl", c.LeaderTTL))
}

// Defaults fills in the settings left zero (config.Start calls it, after
// Validate).
func (c *Config) Defaults() {
	c.ProposalTimeout = cmp.Or(c.ProposalTimeout, 10*time.Second)
	c.Retention = cmp.Or(c.Retention, jobs.DefaultRetention)
	c.DependencyGrace = cmp.Or(c.DependencyGrace, DefaultDependencyGrace)
	c.LeaderTTL = cmp.Or(c.LeaderTTL, store.DefaultNodeTTL)
}
