//go:build !lockstep_client

package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/services/agent/health"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// healthFlags are `lockstep agent`'s GPU health-check flags.
type healthFlags struct {
	interval time.Duration
	program  string
	timeout  time.Duration
	kmsg     string
}

func (h *healthFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&h.interval, "health-interval", 30*time.Second, "poll nvidia-smi (uncorrectable ECC, pending page retirement or row remapping, GPUs fallen off the bus) and run --health-check-program this often; a failing GPU is withdrawn until `lockstep node resume` (0: no health checks)")
	fs.StringVar(&h.program, "health-check-program", "", "run this program on every health poll, like Slurm's HealthCheckProgram: exit 0 is healthy; otherwise lines \"gpu <index or uuid>: <reason>\" withdraw those GPUs, and without such a line every GPU")
	fs.StringVar(&h.kmsg, "health-kernel-log", "/dev/kmsg", "read the GPUs' Xid errors from this kernel log device (\"\": none; it needs CAP_SYSLOG where kernel.dmesg_restrict is 1)")
	fs.DurationVar(&h.timeout, "health-check-timeout", health.DefaultProgramTimeout, "kill --health-check-program after this long (the node's GPUs are then withdrawn)")
}

// config builds the agent's health settings for node. The GPUs watched
// are those discovery finds (--sysfs-root, --nvidia-smi) among the node's
// registered ones; a simulated node (--gpus N), whose GPUs are no real
// ones, and a node without nvidia-smi only run the program.
func (h *healthFlags) config(ctx context.Context, d discoverFlags, node domain.Node, log *slog.Logger) agent.HealthConfig {
	cfg := agent.HealthConfig{Interval: h.interval, Program: h.program, ProgramTimeout: h.timeout}
	if h.interval <= 0 {
		return cfg
	}
	if node.Simulated {
		log.Info("GPU health: simulated GPUs are not polled")
		return cfg
	}
	gpus := node.GPUs
	src := discover.HostSources(d.sysRoot, d.smiPath)
	if src.SMI == nil {
		log.Info("GPU health: no nvidia-smi, so no GPU is polled", "why", src.NoSMI)
		return cfg
	}
	inv, err := discover.Discover(ctx, src)
	if err != nil {
		log.Warn("GPU health: discovery failed, so no GPU is polled", "err", err)
		return cfg
	}
	for _, g := range inv.GPUs {
		if g.Index < gpus {
			cfg.GPUs = append(cfg.GPUs, g)
		}
	}
	if len(cfg.GPUs) == 0 {
		return cfg
	}
	path := d.smiPath
	if path == "" {
		path = "nvidia-smi"
	}
	cfg.SMI = health.Command(path)
	if h.kmsg != "" {
		if cfg.KernelLog, err = health.Kmsg(h.kmsg); err != nil {
			log.Warn("GPU health: kernel log unreadable, so Xid errors go unseen", "err", err)
		}
	}
	return cfg
}
