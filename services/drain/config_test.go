package drain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/drain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// A negative check interval is refused by name before the check loop's
// ticker could panic on it; zero means the default.
func TestConfigValidatesCheckInterval(t *testing.T) {
	base := config.Base{NATSURL: "nats://127.0.0.1:4222", Etcd: "127.0.0.1:2379", StreamReplicas: 1}
	bad := drain.Config{Base: base, CheckInterval: -time.Second}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "CheckInterval") {
		t.Errorf("negative CheckInterval: %v, want an error naming it", err)
	}
	good := drain.Config{Base: base}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	good.Defaults()
	if good.CheckInterval != drain.DefaultCheckInterval {
		t.Errorf("defaults: interval %s, want %s", good.CheckInterval, drain.DefaultCheckInterval)
	}
}
