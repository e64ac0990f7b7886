package devcluster

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/services/agent/discover/fake"
)

// FakeHealth is the health-check setting of a node whose nvidia-smi is the
// simulated machine m: its GPUs, as discovery reads them, polled every
// interval. m.SetFault breaks a GPU (uncorrectable ECC errors, pending row
// remapping, lost from the bus) the way nvidia-smi would show it, so the
// gpu-unhealthy path runs in dev exactly as on metal.
func FakeHealth(ctx context.Context, m *fake.Machine, interval time.Duration) (agent.HealthConfig, error) {
	inv, err := discover.Discover(ctx, m.Sources())
	if err != nil {
		return agent.HealthConfig{}, errors.Wrapf(err, "discovering simulated machine %s", m.Host())
	}
	return agent.HealthConfig{Interval: interval, GPUs: inv.GPUs, SMI: m.SMI}, nil
}
