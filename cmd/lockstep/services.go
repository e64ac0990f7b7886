package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/drain"
	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/services/placement"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// serviceFlags parses the flags every service takes, plus extra ones, and
// resolves the connection.
func serviceFlags(env *cliEnv, name, summary string, args []string, extra func(*flag.FlagSet)) (config.Base, error) {
	b, err := parseServiceFlags(env, name, summary, args, extra)
	if err != nil {
		return b, err
	}
	return b, resolveService(env, &b)
}

// parseServiceFlags only parses: a service mode that never connects
// (`agent --discover`) stops here, so it needs no NATS or etcd settings.
func parseServiceFlags(env *cliEnv, name, summary string, args []string, extra func(*flag.FlagSet)) (config.Base, error) {
	var b config.Base
	b.MetricsAddr = config.DefaultMetricsAddr[name]
	fs := newFlags(env, name, "[flags]", summary)
	b.Register(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return b, err
	}
	if fs.NArg() > 0 {
		return b, usagef("%s takes no arguments, got %q", name, fs.Args())
	}
	return b, nil
}

// resolveService fills the connection from flags, environment and config
// file, the instance name and the logger, and validates them.
func resolveService(env *cliEnv, b *config.Base) error {
	if err := b.ResolveConnection(os.Getenv); err != nil {
		return err
	}
	if b.Instance == "" {
		b.Instance, _ = os.Hostname()
	}
	b.Log = newLogger(env)
	return b.Validate()
}

// serve runs one service with its telemetry: spans exported as the OTEL_*
// environment says, /metrics, /healthz and /readyz on --metrics-addr.
func serve(ctx context.Context, b config.Base, service string, run func(config.Base) error) error {
	stop, err := b.StartTelemetry(ctx, service, version)
	if err != nil {
		return err
	}
	defer stop()
	return run(b)
}

func runAdmission(ctx context.Context, env *cliEnv, args []string) error {
	var queuesFile string
	b, err := serviceFlags(env, "admission", "Consume submissions, validate them, record accepted jobs.", args, func(fs *flag.FlagSet) {
		fs.StringVar(&queuesFile, "queues", "", "queue policy file: quotas, access lists, priority caps and user limits judge each submission")
	})
	if err != nil {
		return err
	}
	queues, err := config.LoadQueues(queuesFile)
	if err != nil {
		return err
	}
	return serve(ctx, b, "admission", func(b config.Base) error {
		return admission.Run(ctx, admission.Config{Base: b, Queues: queues})
	})
}

func runPlacement(ctx context.Context, env *cliEnv, args []string) error {
	var timeout, retention time.Duration
	var topoFile, queuesFile string
	b, err := serviceFlags(env, "placement", "Propose placements for pending jobs (one leader, others stand by).", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&timeout, "proposal-timeout", 10*time.Second, "reconsider a job whose proposal got no answer after this long")
		fs.StringVar(&topoFile, "topology", "", "switch tree: YAML, Slurm topology.conf, or the Lingjun CSV (default: from node labels)")
		fs.StringVar(&queuesFile, "queues", "", "queue policy file: quotas and fair-share weights")
		retentionFlag(fs, &retention)
	})
	if err != nil {
		return err
	}
	if err := checkRetention(retention); err != nil {
		return err
	}
	cfg := placement.Config{Base: b, ProposalTimeout: timeout, Retention: retention}
	if cfg.Queues, err = config.LoadQueues(queuesFile); err != nil {
		return err
	}
	if topoFile != "" {
		if cfg.Topology, err = topology.LoadFile(topoFile); err != nil {
			return fmt.Errorf("--topology: %w", err)
		}
	}
	return serve(ctx, b, "placement", func(b config.Base) error {
		cfg.Base = b
		return placement.Run(ctx, cfg)
	})
}

func runGang(ctx context.Context, env *cliEnv, args []string) error {
	var ttl, launch time.Duration
	var workers int
	b, err := serviceFlags(env, "gang", "Reserve gangs all-or-nothing in etcd and own their allocations.", args, func(fs *flag.FlagSet) {
		fs.IntVar(&workers, "workers", gang.DefaultWorkers, fmt.Sprintf("proposals (and, separately, agent reports) handled at once, 1..%d: reservations wait on etcd's fsync, so throughput ≈ workers ÷ latency", gang.MaxWorkers))
		fs.DurationVar(&ttl, "reservation-ttl", store.DefaultReservationTTL, "reservation lease TTL (claims of a crashed gang service vanish after this)")
		fs.DurationVar(&launch, "launch-timeout", store.DefaultLaunchTimeout, "release and requeue a gang not fully running after this long")
	})
	if err != nil {
		return err
	}
	if workers < 1 || workers > gang.MaxWorkers { // 0 would mean "the default" to gang.Config
		return usagef("--workers: %d is outside 1..%d", workers, gang.MaxWorkers)
	}
	return serve(ctx, b, "gang", func(b config.Base) error {
		return gang.Run(ctx, gang.Config{Base: b, ReservationTTL: ttl, LaunchTimeout: launch, Workers: workers})
	})
}

func runDrain(ctx context.Context, env *cliEnv, args []string) error {
	var queuesFile string
	b, err := serviceFlags(env, "drain", "Stop gangs that must stop: cancellation.", args, func(fs *flag.FlagSet) {
		fs.StringVar(&queuesFile, "queues", "", "queue policy file: its admins and operators may cancel and drain any job")
	})
	if err != nil {
		return err
	}
	queues, err := config.LoadQueues(queuesFile)
	if err != nil {
		return err
	}
	return serve(ctx, b, "drain", func(b config.Base) error {
		return drain.Run(ctx, drain.Config{Base: b, Queues: queues})
	})
}

func runAgent(ctx context.Context, env *cliEnv, args []string) error {
	var cfg agent.Config
	var disc discoverFlags
	host, _ := os.Hostname()
	b, err := parseServiceFlags(env, "agent", "Register this node and run the ranks assigned to it.", args, func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.Node.Name, "name", host, "node name")
		fs.StringVar(&cfg.Node.Addr, "addr", host, "address other nodes reach this one at (MASTER_ADDR)")
		fs.IntVar(&cfg.Node.GPUs, "gpus", 8, "number of GPUs (simulated: indices only)")
		fs.StringVar(&cfg.Node.Leaf, "leaf", "", "leaf (ToR) switch label")
		fs.StringVar(&cfg.Node.Spine, "spine", "", "spine switch label")
		fs.StringVar(&cfg.Node.Block, "block", "", "block (NVLink domain) label")
		fs.StringVar(&cfg.DataDir, "data-dir", "/var/lib/lockstep", "rank working directories and logs")
		fs.DurationVar(&cfg.LeaseTTL, "lease-ttl", store.DefaultNodeTTL, "node lease TTL: the node is declared down this long after the agent stops renewing")
		fs.DurationVar(&cfg.StopGrace, "stop-grace", 5*time.Second, "time between SIGTERM and SIGKILL when stopping ranks")
		fs.DurationVar(&cfg.Retention, "retention", agent.DefaultRetention, "keep an attempt's directory (rank logs) this long after its ranks ended here")
		fs.StringVar((*string)(&cfg.Containment), "containment", string(agent.ContainAuto), "how rank process trees are contained: auto (a cgroup per rank where possible), cgroup, process (supervisors only)")
		fs.StringVar(&cfg.MapUnknownUsersTo, "map-unknown-users-to", "", "run the ranks of a job whose owner has no account on this node as this user (e.g. nobody) instead of failing the job here")
		fs.BoolVar(&cfg.AllowRootRanks, "allow-root-ranks", false, "let ranks of an owner who is root on this node run as root")
		disc.register(fs)
	})
	if err != nil {
		return err
	}
	if disc.discover {
		return runDiscover(ctx, env, disc)
	}
	if err := resolveService(env, &b); err != nil {
		return err
	}
	return serve(ctx, b, "agent", func(b config.Base) error {
		cfg.Base = b
		return agent.Run(ctx, cfg)
	})
}

// retentionFlag adds --retention: how long finished job records are kept.
func retentionFlag(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "retention", jobs.DefaultRetention, "remove a finished job's record from the jobs KV this long after it ended (its events stay in the events stream until that stream's own 7-day limit)")
}

func checkRetention(d time.Duration) error {
	if d < time.Second {
		return usagef("--retention: %s is below 1s", d)
	}
	return nil
}

// newLogger is the services' logger: info and above.
func newLogger(env *cliEnv) *slog.Logger { return newLeveledLogger(env, slog.LevelInfo) }
