package devcluster

import (
	"strings"
	"testing"
	"time"
)

// dev's settings are refused under dev's own flag names before anything
// starts (the agents would refuse a short lease as their --lease-ttl, once
// NATS and etcd ran).
func TestConfigValidateNamesDevsFlags(t *testing.T) {
	good := func() Config { return Config{DataDir: t.TempDir(), Nodes: 4, GPUsPerNode: 8, Leaves: 2, Replicas: 1} }
	if c := good(); c.Validate() != nil {
		t.Fatalf("valid settings refused: %v", c.Validate())
	}
	for _, tc := range []struct {
		flag string
		edit func(*Config)
	}{
		{"--node-ttl", func(c *Config) { c.NodeTTL = time.Second }},
		{"--launch-timeout", func(c *Config) { c.LaunchTimeout = -time.Second }},
		{"--launch-timeout", func(c *Config) { c.LaunchTimeout = 500 * time.Millisecond }}, // gang's minimum
		{"--nodes", func(c *Config) { c.Nodes = 0 }},
	} {
		flag, c := tc.flag, good()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), flag+": ") {
			t.Errorf("%s: %v", flag, err)
		}
	}
}
