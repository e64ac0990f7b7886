//go:build !lockstep_client

package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// discoverFlags are `lockstep agent`'s discovery flags: --discover prints
// what discovery finds; serving, the agent registers it (unless --gpus
// simulates GPUs instead).
type discoverFlags struct {
	discover bool
	output   choice
	sysRoot  string
	smiPath  string
}

func (d *discoverFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&d.discover, "discover", false, "print this node's CPUs, NUMA nodes, GPUs and RDMA NICs, then exit (needs no NATS or etcd)")
	// Its own -o: the global one is table or json.
	d.output = choice{value: "text", allowed: []string{"text", "json"}}
	fs.VarP(&d.output, "output", "o", "--discover output: text or json")
	fs.StringVar(&d.sysRoot, "sysfs-root", "/sys", "sysfs to read CPUs, NUMA nodes and NICs from (another tree: the process's cpuset is not applied)")
	fs.StringVar(&d.smiPath, "nvidia-smi", "", "nvidia-smi to run for GPUs (default: found on PATH; none means no GPUs)")
}

// runDiscover prints what discovery finds on this node.
func (a *app) runDiscover(ctx context.Context, d discoverFlags) error {
	inv, err := discover.Discover(ctx, discover.HostSources(d.sysRoot, d.smiPath))
	if err != nil {
		return err
	}
	if d.output.value == "text" {
		return discover.WriteText(a.env.stdout, inv)
	}
	return writeJSON(a.env, inv)
}

// nodeHardware fills the node the agent registers: with --gpus N (N > 0)
// N simulated GPUs, indices only; otherwise what discovery finds here, which
// may be no GPUs at all (a CPU node).
func (a *app) nodeHardware(ctx context.Context, cfg *agent.Config, d discoverFlags, log *slog.Logger) error {
	if cfg.Node.GPUs < 0 {
		return usagef("--gpus: %d is negative (0 discovers the GPUs)", cfg.Node.GPUs)
	}
	if cfg.Node.GPUs > 0 {
		cfg.Node.Simulated = true
		log.Warn("simulated node: --gpus declares GPUs that are not discovered; no CPU or NUMA layout is registered", "gpus", cfg.Node.GPUs)
		return nil
	}
	inv, err := discover.Discover(ctx, discover.HostSources(d.sysRoot, d.smiPath))
	if err != nil {
		return errors.WithHint(errors.Wrap(err, "discovering this node's hardware"),
			"fix --nvidia-smi or --sysfs-root, or simulate GPUs with --gpus N")
	}
	inv.FillNode(&cfg.Node)
	cfg.GPUUUIDs = inv.UUIDs()
	log.Info("hardware discovered", "cpus", inv.CPUs, "numaNodes", len(inv.NUMANodes), "gpus", len(inv.GPUs), "gpuModel", cfg.Node.GPUModel, "nics", len(inv.NICs))
	if len(inv.Notes) > 0 {
		log.Info("discovery notes: " + strings.Join(inv.Notes, "; "))
	}
	return nil
}
