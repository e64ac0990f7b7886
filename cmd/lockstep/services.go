//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/drain"
	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/services/placement"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// service adds to a service's command the flags every service takes
// (config.Base.Register: --stream-replicas, --instance, --metrics-addr, …;
// the connection flags are global), filling b. The command's RunE ends in
// serve.
func (a *app) service(cmd *cobra.Command, b *config.Base) {
	b.MetricsAddr = config.DefaultMetricsAddr[cmd.Name()]
	b.Register(cmd.Flags())
}

// serve resolves a service's connection (flags, environment, config file),
// instance name and logger, validates them, and runs the service with its
// telemetry: spans exported as the OTEL_* environment says, /metrics,
// /healthz and /readyz on --metrics-addr.
func (a *app) serve(ctx context.Context, b config.Base, service string, run func(config.Base) error) error {
	if err := b.ResolveConnection(a.globals.conn, os.Getenv); err != nil {
		return err
	}
	if b.Instance == "" {
		b.Instance, _ = os.Hostname()
	}
	b.Log = newLeveledLogger(a.env, slog.LevelInfo)
	if err := b.Validate(); err != nil {
		return err
	}
	stop, err := b.StartTelemetry(ctx, service, version)
	if err != nil {
		return err
	}
	defer stop()
	return run(b)
}

// queuesService is the RunE of a service whose only flag of its own is
// --queues (admission, drain).
func (a *app) queuesService(cmd *cobra.Command, queuesUsage string, run func(context.Context, config.Base, queue.Config) error) runE {
	var b config.Base
	a.service(cmd, &b)
	queues := queuesFlag(cmd.Flags(), queuesUsage)
	return func(cmd *cobra.Command, _ []string) error {
		q, err := queues()
		if err != nil {
			return err
		}
		return a.serve(cmd.Context(), b, cmd.Name(), func(b config.Base) error { return run(cmd.Context(), b, q) })
	}
}

func (a *app) admission(cmd *cobra.Command) runE {
	cmd.Long = "Consume submissions, validate them, record accepted jobs."
	return a.queuesService(cmd, "quotas, access lists, priority caps and user limits judge each submission",
		func(ctx context.Context, b config.Base, q queue.Config) error {
			return admission.Run(ctx, admission.Config{Base: b, Queues: q})
		})
}

func (a *app) drain(cmd *cobra.Command) runE {
	cmd.Long = "Stop gangs that must stop: cancellation."
	return a.queuesService(cmd, "its admins and operators may cancel and drain any job",
		func(ctx context.Context, b config.Base, q queue.Config) error {
			return drain.Run(ctx, drain.Config{Base: b, Queues: q})
		})
}

func (a *app) placement(cmd *cobra.Command) runE {
	cmd.Long = "Propose placements for pending jobs (one leader, others stand by)."
	var b config.Base
	a.service(cmd, &b)
	fs := cmd.Flags()
	timeout := fs.Duration("proposal-timeout", 10*time.Second, "reconsider a job whose proposal got no answer after this long")
	topo := topologyFlag(fs, "switch tree: YAML, Slurm topology.conf, or the Lingjun CSV (default: from node labels)")
	queues := queuesFlag(fs, "quotas and fair-share weights")
	retention := retentionFlag(fs)
	leaderTTL := fs.Duration("leader-ttl", store.DefaultNodeTTL, "election session TTL: a standby takes over this long after the leader stops renewing it (whole seconds, at least 2s)")
	return func(cmd *cobra.Command, _ []string) error {
		cfg := placement.Config{ProposalTimeout: *timeout, Retention: *retention, LeaderTTL: *leaderTTL}
		if err := checkRetention(cfg.Retention); err != nil {
			return err
		}
		var err error
		if cfg.Queues, err = queues(); err != nil {
			return err
		}
		if cfg.Topology, err = topo(); err != nil {
			return err
		}
		return a.serve(cmd.Context(), b, "placement", func(b config.Base) error {
			cfg.Base = b
			return placement.Run(cmd.Context(), cfg)
		})
	}
}

func (a *app) gang(cmd *cobra.Command) runE {
	cmd.Long = "Reserve gangs all-or-nothing in etcd and own their allocations."
	var b config.Base
	a.service(cmd, &b)
	fs := cmd.Flags()
	workers := fs.Int("workers", gang.DefaultWorkers, fmt.Sprintf("proposals (and, separately, agent reports) handled at once, 1..%d: reservations wait on etcd's fsync, so throughput ≈ workers ÷ latency", gang.MaxWorkers))
	ttl := fs.Duration("reservation-ttl", store.DefaultReservationTTL, "reservation lease TTL (claims of a crashed gang service vanish after this)")
	launch := fs.Duration("launch-timeout", store.DefaultLaunchTimeout, "release and requeue a gang not fully running after this long")
	return func(cmd *cobra.Command, _ []string) error {
		if *workers < 1 || *workers > gang.MaxWorkers { // 0 would mean "the default" to gang.Config
			return usagef("--workers: %d is outside 1..%d", *workers, gang.MaxWorkers)
		}
		return a.serve(cmd.Context(), b, "gang", func(b config.Base) error {
			return gang.Run(cmd.Context(), gang.Config{Base: b, ReservationTTL: *ttl, LaunchTimeout: *launch, Workers: *workers})
		})
	}
}

func (a *app) agent(cmd *cobra.Command) runE {
	cmd.Long = "Register this node and run the ranks assigned to it."
	var b config.Base
	var cfg agent.Config
	var disc discoverFlags
	a.service(cmd, &b)
	host, _ := os.Hostname()
	fs := cmd.Flags()
	fs.StringVar(&cfg.Node.Name, "name", host, "node name")
	fs.StringVar(&cfg.Node.Addr, "addr", host, "address other nodes reach this one at (MASTER_ADDR)")
	fs.IntVar(&cfg.Node.GPUs, "gpus", 0, "simulate this many GPUs (indices only; node list says SIMULATED) instead of discovering the node's hardware; 0: discover")
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
	visible := choice{value: string(agent.VisibleIndex), allowed: []string{string(agent.VisibleIndex), string(agent.VisibleUUID)}}
	fs.Var(&visible, "visible-devices", "how CUDA_VISIBLE_DEVICES names a rank's GPUs: index or uuid")
	runtime := choice{value: agent.RuntimeNone, allowed: []string{agent.RuntimeNone, agent.RuntimeDocker}}
	fs.Var(&runtime, "container-runtime", "run container jobs (spec container:) through a Docker Engine API: docker (Docker, or Podman's API service), or none to refuse them on this node")
	fs.StringVar(&cfg.ContainerShare, "container-share", "", "the container this agent runs in (by name), when it does: rank containers join its network and IPC and mount its --data-dir volume (that volume only) instead of the host's; for agents in compose")
	fs.StringSliceVar(&cfg.ContainerMountsUnder, "container-mounts-under", nil, "host trees container jobs may bind-mount from (comma-separated or repeated, e.g. /datasets,/scratch); none: container jobs may mount nothing")
	fs.StringVar(&cfg.ContainerHost, "container-host", "", "the container engine's API address (unix:///run/podman/podman.sock for Podman); default: $DOCKER_HOST, else the engine's default socket")
	disc.register(fs)
	var hf healthFlags
	hf.register(fs)
	return func(cmd *cobra.Command, _ []string) error {
		// --discover never connects: it needs no NATS or etcd settings.
		if disc.discover {
			return a.runDiscover(cmd.Context(), disc)
		}
		cfg.VisibleDevices = agent.VisibleDevices(visible.value)
		cfg.ContainerRuntime = runtime.value
		return a.serve(cmd.Context(), b, "agent", func(b config.Base) error {
			cfg.Base = b
			if err := a.nodeHardware(cmd.Context(), &cfg, disc, b.Log); err != nil {
				return err
			}
			cfg.Health = hf.config(cmd.Context(), disc, cfg.Node, b.Log)
			return agent.Run(cmd.Context(), cfg)
		})
	}
}

// queuesFlag adds --queues, a queue policy file; the func it returns reads
// the file (none: the default policy).
func queuesFlag(fs *pflag.FlagSet, usage string) func() (queue.Config, error) {
	path := fs.String("queues", "", "queue policy file: "+usage)
	return func() (queue.Config, error) { return config.LoadQueues(*path) }
}

// topologyFlag adds --topology, a switch tree file; the func it returns
// reads the file (none: nil, the tree from the nodes' labels).
func topologyFlag(fs *pflag.FlagSet, usage string) func() (*topology.Topology, error) {
	path := fs.String("topology", "", usage)
	return func() (*topology.Topology, error) {
		if *path == "" {
			return nil, nil
		}
		t, err := topology.LoadFile(*path)
		return t, errors.Wrap(err, "--topology")
	}
}

// retentionFlag adds --retention: how long finished job records are kept.
func retentionFlag(fs *pflag.FlagSet) *time.Duration {
	return fs.Duration("retention", jobs.DefaultRetention, "remove a finished job's record from the jobs KV this long after it ended (its events stay in the events stream until that stream's own 7-day limit)")
}

func checkRetention(d time.Duration) error {
	if d < time.Second {
		return usagef("--retention: %s is below 1s", d)
	}
	return nil
}
