package agent

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

func TestConfigValidateHardware(t *testing.T) {
	base := func() Config {
		return Config{Base: config.Base{NATSURL: "nats://x", Etcd: "x", StreamReplicas: 1}, DataDir: "/d",
			Node: domain.Node{Name: "n1", Addr: "n1", GPUs: 2, CPUs: 4,
				NUMA: []domain.NUMANode{{ID: 0, GPUs: []int{0}, CPUs: []int{0, 1}}, {ID: 1, GPUs: []int{1}, CPUs: []int{2, 3}}}}}
	}
	for name, tc := range map[string]struct {
		mutate func(*Config)
		want   string // "" valid
	}{
		"discovered":          {func(*Config) {}, ""},
		"CPU node":            {func(c *Config) { c.Node.GPUs, c.Node.NUMA = 0, nil }, ""},
		"simulated, no GPUs":  {func(c *Config) { c.Node.GPUs, c.Node.NUMA, c.Node.Simulated = 0, nil, true }, "--gpus"},
		"65 GPUs":             {func(c *Config) { c.Node.GPUs = 65 }, "gpus: 65 discovered"},
		"65 simulated":        {func(c *Config) { c.Node.GPUs, c.Node.NUMA, c.Node.Simulated = 65, nil, true }, "--gpus: 65"},
		"uuid":                {func(c *Config) { c.VisibleDevices, c.GPUUUIDs = VisibleUUID, []string{"GPU-a", "GPU-b"} }, ""},
		"uuid, none known":    {func(c *Config) { c.VisibleDevices = VisibleUUID }, "--visible-devices=uuid"},
		"bad visible":         {func(c *Config) { c.VisibleDevices = "bus" }, "--visible-devices"},
		"GPU out of range":    {func(c *Config) { c.Node.NUMA[1].GPUs = []int{2} }, "GPU 2"},
		"core twice":          {func(c *Config) { c.Node.NUMA[1].CPUs = []int{1, 2} }, "core 1"},
		"core past CPUs":      {func(c *Config) { c.Node.CPUs = 3 }, "core 3"},
		"negative stop grace": {func(c *Config) { c.StopGrace = -1 }, "--stop-grace: -1ns is negative"},
		"mounts under":        {func(c *Config) { c.ContainerMountsUnder = []string{"/datasets"} }, ""},
		"mounts under, rel":   {func(c *Config) { c.ContainerMountsUnder = []string{"datasets"} }, "not a clean absolute path"},
		"mounts under, share": {func(c *Config) { c.ContainerMountsUnder, c.ContainerShare = []string{"/datasets"}, "node-1" }, "not with --container-share"},
	} {
		c := base()
		tc.mutate(&c)
		err := c.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
		// A flag's error is the command line's fault (exit 2); what
		// discovery found is not.
		if err != nil && strings.HasPrefix(err.Error(), "--") != errs.IsBadSetting(err) {
			t.Errorf("%s: %v: marked a bad setting %v, want it so only for a flag", name, err, errs.IsBadSetting(err))
		}
	}
}
