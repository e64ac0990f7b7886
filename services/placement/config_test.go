package placement

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// A negative proposal timeout is refused naming its flag (it would
// re-propose every job at once, on every cycle).
func TestConfigRefusesANegativeProposalTimeout(t *testing.T) {
	c := Config{Base: config.Base{NATSURL: "nats://x", Etcd: "x", StreamReplicas: 1}, ProposalTimeout: -time.Second}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--proposal-timeout: -1s is negative") {
		t.Errorf("Validate = %v", err)
	}
}
