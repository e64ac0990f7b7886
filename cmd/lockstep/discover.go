package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// discoverFlags are `lockstep agent`'s discovery flags. Only --discover
// uses them yet: registration still reports --gpus (issue 17, item 2).
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
