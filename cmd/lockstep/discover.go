package main

import (
	"context"
	"encoding/json"
	"flag"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// discoverFlags are `lockstep agent`'s discovery flags. Only --discover
// uses them yet: registration still reports --gpus (issue 17, item 2).
type discoverFlags struct {
	discover bool
	output   string
	sysRoot  string
	smiPath  string
}

func (d *discoverFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&d.discover, "discover", false, "print this node's CPUs, NUMA nodes, GPUs and RDMA NICs, then exit (needs no NATS or etcd)")
	fs.StringVar(&d.output, "o", "text", "--discover output: text or json")
	fs.StringVar(&d.sysRoot, "sysfs-root", "/sys", "sysfs to read CPUs, NUMA nodes and NICs from (another tree: the process's cpuset is not applied)")
	fs.StringVar(&d.smiPath, "nvidia-smi", "", "nvidia-smi to run for GPUs (default: found on PATH; none means no GPUs)")
}

// runDiscover prints what discovery finds on this node.
func runDiscover(ctx context.Context, env *cliEnv, d discoverFlags) error {
	if d.output != "text" && d.output != "json" {
		return usagef("-o: %q is not one of text, json", d.output)
	}
	inv, err := discover.Discover(ctx, discover.HostSources(d.sysRoot, d.smiPath))
	if err != nil {
		return err
	}
	if d.output == "text" {
		return discover.WriteText(env.stdout, inv)
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(inv)
}
