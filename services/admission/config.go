package admission

import (
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// Config configures an admission replica.
type Config struct {
	config.Base
	// Queues holds the queue policy: a job bigger than its queue's quota
	// can never run and is rejected, and so is one the access lists,
	// priority caps or user limits refuse its owner (queue.Admit).
	Queues queue.Config
	// MaxDeliver is how often a submission is delivered before admission
	// gives up on it and rejects it (0: bus.DefaultMaxDeliver).
	MaxDeliver int
}

// Validate checks the admission settings.
func (c *Config) Validate() error {
	return c.Base.ValidateWith(
		config.Require(c.MaxDeliver >= 0, "admission: MaxDeliver %d is negative", c.MaxDeliver))
}
