package drain

import (
	"cmp"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// Config configures a drain replica.
type Config struct {
	config.Base
	// CheckInterval is how often deadlines, time limits and node drains are
	// looked at.
	CheckInterval time.Duration
	// Queues is the queue policy; its admins and operators may cancel,
	// drain and checkpoint any job, everyone else their own.
	Queues queue.Config
}

// DefaultCheckInterval is Config.CheckInterval's default.
const DefaultCheckInterval = 250 * time.Millisecond

// Validate checks the drain settings: a negative interval would stop the
// check loop's ticker with a panic.
func (c *Config) Validate() error {
	return c.Base.ValidateWith(
		config.Require(c.CheckInterval >= 0, "drain: CheckInterval %s is negative", c.CheckInterval))
}

// Defaults fills in the settings left zero (config.Start calls it, after
// Validate).
func (c *Config) Defaults() {
	c.CheckInterval = cmp.Or(c.CheckInterval, DefaultCheckInterval)
}
