package devcluster

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/services/agent/discover/fake"
)

// FakeHealth simulates host as a DGX H100 (the shape of a dev node of 8
// GPUs) and returns the machine with the health-check setting of a node
// whose nvidia-smi it is: its GPUs, as discovery reads them, polled every
// interval. m.SetFault breaks a GPU (uncorrectable ECC errors, pending row
// remapping, lost from the bus) the way nvidia-smi would show it, so the
// gpu-unhealthy path runs in dev exactly as on metal.
func FakeHealth(ctx context.Context, host string, interval time.Duration) (*fake.Machine, agent.HealthConfig, error) {
	m, err := fake.New(host, fake.DGXH100())
	if err != nil {
		return nil, agent.HealthConfig{}, errors.Wrapf(err, "simulating machine %s", host)
	}
	inv, err := discover.Discover(ctx, m.Sources())
	if err != nil {
		return nil, agent.HealthConfig{}, errors.Wrapf(err, "discovering simulated machine %s", host)
	}
	return m, agent.HealthConfig{Interval: interval, GPUs: inv.GPUs, SMI: m.SMI}, nil
}

// HealthProgram writes script as an executable node health-check program in
// dir and returns its path, for HealthConfig.Program: a site's own check,
// whose failing exit withdraws the GPUs its output names.
func HealthProgram(dir, script string) (string, error) {
	path := filepath.Join(dir, "node-health")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", errors.Wrap(err, "writing the health-check program")
	}
	return path, nil
}
