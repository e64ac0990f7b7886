// Package agent is node execution. An agent registers its node in etcd
// under a lease it keeps alive, watches the assignments written for it, and
// runs each assigned rank as a real OS process with the environment
// torchrun and NCCL expect. It reports ranks started and exited to gang,
// streams their output to NATS, and stops ranks whose assignment is
// deleted. If it loses its lease (partition, long pause) it stops every
// rank at once: a node that is declared down runs nothing.
package agent

import (
	"cmp"
	"context"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Config configures one agent (one node).
type Config struct {
	config.Base
	// Node describes the machine: name, address, GPUs, topology labels.
	Node domain.Node
	// DataDir holds rank working directories and log files.
	DataDir string
	// LeaseTTL is the liveness lease TTL.
	LeaseTTL time.Duration
	// StopGrace is how long a rank gets between SIGTERM and SIGKILL.
	StopGrace time.Duration
	// Containment is how each rank's process tree is tracked (default
	// ContainAuto).
	Containment Containment
	// Retention is how long an attempt's directory (rank logs, ack files)
	// is kept after its ranks ended here (default DefaultRetention).
	Retention time.Duration
	// MapUnknownUsersTo is the local account that ranks of an owner with
	// no account on this node run as ("": such a job fails here).
	// `lockstep dev` sets "nobody" for its demo users.
	MapUnknownUsersTo string
	// AllowRootRanks lets ranks of an owner that is root on this node run
	// as root (an agent running as root never does otherwise).
	AllowRootRanks bool
	// VisibleDevices is how CUDA_VISIBLE_DEVICES names a rank's GPUs:
	// VisibleIndex (the default) or VisibleUUID, which needs GPUUUIDs.
	VisibleDevices VisibleDevices
	// GPUUUIDs are the node's GPUs' UUIDs by index, as discovery found
	// them (none on a simulated node).
	GPUUUIDs []string
	// Health turns on GPU health checks (health_loop.go).
	Health HealthConfig
	// ShimTarget is the lockstep binary the Slurm command shims (srun,
	// scontrol, … on every job's PATH) link to; "" is the agent's own
	// executable.
	ShimTarget string
	// ContainerRuntime is RuntimeDocker to run container jobs through a
	// Docker Engine API (Docker's or Podman's), or RuntimeNone ("") to
	// refuse them; ContainerHost is that API's address ("" = DOCKER_HOST,
	// else the engine's default socket).
	ContainerRuntime string
	ContainerHost    string
	// ContainerShare is the container this agent runs in, when it does
	// (the compose cluster): rank containers join its network, IPC and
	// volumes (containers.Sharing). "": the host's. Without the docker
	// runtime it is unused (compose sets both, the runtime from the
	// environment).
	ContainerShare string
	// ContainerMountsUnder are the host trees container jobs may
	// bind-mount from (checkMountSources); none: no job may mount any.
	ContainerMountsUnder []string
}

// Container runtimes.
const (
	RuntimeNone   = "none"
	RuntimeDocker = domain.ContainerRuntimeDocker
)

// VisibleDevices is how CUDA_VISIBLE_DEVICES names GPUs.
type VisibleDevices string

const (
	// VisibleIndex names GPUs by nvidia-smi index, as Slurm does.
	VisibleIndex VisibleDevices = "index"
	// VisibleUUID names them by UUID, which stays right where the CUDA
	// runtime would number GPUs otherwise (CUDA_DEVICE_ORDER unset).
	VisibleUUID VisibleDevices = "uuid"
)

// DefaultRetention matches the events stream's age limit: a job's rank
// logs live as long as its events.
const DefaultRetention = 7 * 24 * time.Hour

// Validate checks the agent settings.
func (c *Config) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	// What discovery found is not the command line's fault.
	if !c.Node.Simulated && (c.Node.GPUs < 0 || c.Node.GPUs > 64) {
		return errors.Newf("gpus: %d discovered, more than the 64 a node may have", c.Node.GPUs)
	}
	if err := errs.MarkBadSetting(c.checkSettings()); err != nil {
		return err
	}
	return checkLayout(c.Node)
}

// checkSettings checks the agent's own flags.
func (c *Config) checkSettings() error {
	switch {
	case !domain.ValidNodeName(c.Node.Name):
		return errors.Newf("--name: %q is not a valid node name (at most %d bytes; no dots, slashes, spaces, wildcards or control characters)",
			c.Node.Name, domain.MaxNameBytes)
	case c.Node.Simulated && (c.Node.GPUs < 1 || c.Node.GPUs > 64):
		return errors.Newf("--gpus: %d is not between 1 and 64", c.Node.GPUs)
	case c.Node.Addr == "":
		return errors.New("--addr: the address other ranks reach this node at is required")
	case c.DataDir == "":
		return errors.New("--data-dir: required")
	case c.StopGrace < 0:
		return errors.Newf("--stop-grace: %s is negative", c.StopGrace)
	}
	if len(c.ContainerMountsUnder) > 0 && c.ContainerShare != "" {
		// The agent checks a mount's source in its own file system; with
		// --container-share the engine resolves it in the host's.
		return errors.New("--container-mounts-under: not with --container-share: the agent checks mount sources in its own container, the engine takes them from the host")
	}
	for _, u := range c.ContainerMountsUnder {
		if !path.IsAbs(u) || path.Clean(u) != u {
			return errors.Newf("--container-mounts-under: %q is not a clean absolute path", u)
		}
	}
	if err := config.LeaseTTL("--lease-ttl", c.LeaseTTL); err != nil {
		return err
	}
	switch {
	case c.Retention < 0:
		return errors.Newf("--retention: %s is negative", c.Retention)
	}
	switch c.Containment {
	case "", ContainAuto, ContainCgroup, ContainProcess:
	default:
		return errors.Newf("--containment: %q is not one of auto, cgroup, process", c.Containment)
	}
	switch c.VisibleDevices {
	case "", VisibleIndex:
	case VisibleUUID:
		if len(c.GPUUUIDs) != c.Node.GPUs {
			return errors.Newf("--visible-devices=uuid: %d GPU UUIDs known for %d GPUs (a simulated node has none)", len(c.GPUUUIDs), c.Node.GPUs)
		}
	default:
		return errors.Newf("--visible-devices: %q is not one of index, uuid", c.VisibleDevices)
	}
	switch c.ContainerRuntime {
	case "", RuntimeNone, RuntimeDocker:
	default:
		return errors.Newf("--container-runtime: %q is not one of docker, none", c.ContainerRuntime)
	}
	return c.Health.Validate()
}

// checkLayout checks the node's NUMA layout against its GPU and core
// counts: each GPU and core on at most one NUMA node, and in range.
func checkLayout(n domain.Node) error {
	gpus, cpus := map[int]bool{}, map[int]bool{}
	for _, d := range n.NUMA {
		for _, g := range d.GPUs {
			if g < 0 || g >= n.GPUs || gpus[g] {
				return errors.Newf("node layout: GPU %d on NUMA node %d is out of range 0..%d or on two NUMA nodes", g, d.ID, n.GPUs-1)
			}
			gpus[g] = true
		}
		for _, c := range d.CPUs {
			if c < 0 || c >= n.CPUs || cpus[c] {
				return errors.Newf("node layout: core %d on NUMA node %d is out of range 0..%d or on two NUMA nodes", c, d.ID, n.CPUs-1)
			}
			cpus[c] = true
		}
	}
	return nil
}

type agent struct {
	// Log (naming the node), Tel, Bus and Etcd, as config.Start made them.
	*config.Started
	cfg  Config
	exec *executor
	// health is nil with health checks off.
	health *healthLoop
}

// Defaults fills in the settings left zero (config.Start calls it, after
// Validate).
func (c *Config) Defaults() {
	c.LeaseTTL = cmp.Or(c.LeaseTTL, store.DefaultNodeTTL)
	c.StopGrace = cmp.Or(c.StopGrace, 5*time.Second)
	c.Retention = cmp.Or(c.Retention, DefaultRetention)
}

// Run serves until ctx ends; on return every rank it started is stopped.
func Run(ctx context.Context, cfg Config) error {
	return config.Serve(ctx, "agent", &cfg, func(st *config.Started) error {
		st.Log = st.Log.With("node", cfg.Node.Name)
		log := st.Log
		if err := os.MkdirAll(filepath.Join(cfg.DataDir, "jobs"), 0o755); err != nil {
			return errors.Wrap(err, "agent data dir")
		}
		b, cli := st.Bus, st.Etcd
		box, err := newContainer(cfg, log)
		if err != nil {
			return errors.Wrap(err, "agent")
		}
		defer box.close()
		// What a previous incarnation left running goes before this one
		// registers: nothing of an earlier registration may run beside the
		// gangs started after it.
		box.sweep()
		a := &agent{Started: st, cfg: cfg}
		a.exec = newExecutor(cfg, b, box, log, a.report)
		a.exec.alive = &runningKeys{etcd: cli, node: cfg.Node.Name, log: log}
		if cfg.ContainerRuntime == RuntimeDocker {
			d, err := startEngine(ctx, cfg, log)
			if err != nil {
				return err
			}
			defer d.Close()
			a.exec.engine = d
			if a.exec.hostMemory, err = containers.HostMemory("/proc/meminfo"); err != nil {
				log.Warn("rank containers get no memory limit", "err", err)
			}
		}
		if l, path, err := listenAcks(cfg.DataDir); err != nil {
			// Ack files still work; only `lockstep ckpt-done` needs the socket.
			log.Warn("no ack socket: ranks acknowledge checkpoints through their ack files only", "err", err)
		} else {
			a.exec.sock = path
			defer os.Remove(path)
			go a.serveAcks(ctx, l)
		}
		if a.exec.shimDir, err = linkShims(cfg.DataDir, cfg.ShimTarget); err != nil {
			// Jobs still run; Slurm scripts calling srun or scontrol do not.
			log.Warn("no Slurm command shims on jobs' PATH", "err", err)
		}
		if a.exec.engine != nil {
			if err := a.exec.openLifelines(ctx); err != nil {
				log.Warn("rank containers have no lifeline: they outlive an agent killed until it starts again", "err", err)
			} else {
				defer os.Remove(a.exec.lifeline)
			}
		}
		if err := a.subscribeSteps(ctx); err != nil {
			return err
		}
		defer a.exec.stopAll("agent shutting down")
		if a.health, err = newHealthLoop(cfg, cli, b, log); err != nil {
			return err
		}
		a.health.restore(ctx)
		go a.health.run(ctx)
		go a.followDrains(ctx)
		go a.exec.keepSweeping(ctx)

		// Each pass is one registration (epoch). Losing the lease ends it: stop
		// everything, register again.
		for ctx.Err() == nil {
			if err := a.serveEpoch(ctx); err != nil && ctx.Err() == nil {
				log.Warn("registration lost; stopping ranks and re-registering", "err", err)
				a.exec.fenceAll("node lease lost")
				clock.Sleep(ctx, time.Second)
			}
		}
		return nil
	})
}

// serveEpoch registers the node under a fresh lease and follows its
// assignments until the lease is lost or ctx ends.
func (a *agent) serveEpoch(ctx context.Context) error {
	granted := time.Now() // no later than etcd starts the lease's clock
	lease, err := a.Etcd.Grant(ctx, int64(a.cfg.LeaseTTL/time.Second))
	if err != nil {
		return errors.Wrap(err, "grant node lease")
	}
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	node := a.cfg.Node
	node.Epoch = int64(lease.ID)
	node.Unhealthy = a.health.withdrawn()
	if a.exec.engine != nil {
		// Only an engine that answered: placement sends container jobs
		// here on the strength of it.
		node.ContainerRuntime = a.cfg.ContainerRuntime
	}
	inv := node
	inv.Epoch = 0
	if _, err := a.Etcd.Txn(ectx).Then(
		clientv3.OpPut(store.NodeKey(node.Name), store.MustJSON(node), clientv3.WithLease(lease.ID)),
		clientv3.OpPut(store.InventoryKey(node.Name), store.MustJSON(inv)),
	).Commit(); err != nil {
		return errors.Wrap(err, "register node")
	}
	a.health.registered(lease.ID, node)
	defer a.health.registered(0, domain.Node{})
	a.Log.Info("node registered", "epoch", node.Epoch, "gpus", node.GPUs, "leaf", node.Leaf)
	a.Tel.Metrics.NodeTransitions.Add(ectx, 1, metric.WithAttributes(telemetry.LabelEvent.String("up")))
	defer a.cfg.Ready("agent", a.Bus, a.Etcd, store.NodeKey(node.Name))()
	_ = a.Bus.PublishEvent(ectx, events.Event{Type: events.NodeUp, Node: node.Name, Epoch: node.Epoch, Time: time.Now().UTC()})

	// The keeper gives the node up a fifth of the TTL before etcd could
	// expire its lease: once etcd does, the gang service requeues this
	// node's gangs elsewhere, and ranks still running here (a partition, a
	// frozen etcd member) would run beside their replacements.
	lost := make(chan error, 1)
	keeper := store.NewLeaseKeeper(a.Etcd, lease.ID, time.Duration(lease.TTL)*time.Second, a.Log) // as granted: whole seconds, at least etcd's minimum
	go func() { lost <- keeper.Hold(ectx, granted) }()
	watchErr := make(chan error, 1)
	go func() { watchErr <- a.followAssignments(ectx, node.Epoch) }()
	leave := func() error {
		if config.Crashed(ctx) {
			return nil // a crashed agent says no goodbye: the lease expires
		}
		// Clean stop: end the ranks, then give the node back now rather
		// than at lease expiry. In that order: revoking the lease deletes
		// the node's running keys, and a rank ignoring SIGTERM must not run
		// beside the next attempt that this allows. The assignment follower
		// goes first: a gang it is starting would otherwise begin after
		// stopAll and outlive the agent's stop.
		cancel()
		<-watchErr
		a.exec.stopAll("agent shutting down")
		rctx, rc := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = a.Etcd.Revoke(rctx, lease.ID)
		rc()
		return nil
	}
	select {
	case <-ctx.Done():
		return leave()
	case err := <-lost:
		if ctx.Err() != nil {
			return leave() // the keeper saw the same end of ctx first
		}
		// Kill the ranks first, then give the lease back if etcd can still
		// be reached (a frozen member, not a partition): the gangs are
		// requeued now rather than when the lease runs out. The assignment
		// follower is stopped first and waited for, then the fence runs
		// again: a gang it was starting would otherwise begin after the
		// fence and outlive it (start refuses to keep one once its
		// registration ended, and the second fence finds any that got in).
		cancel()
		a.exec.fenceAll("node lease lost")
		<-watchErr
		a.exec.fenceAll("node lease lost")
		rctx, rc := context.WithTimeout(context.Background(), time.Second)
		_, _ = a.Etcd.Revoke(rctx, lease.ID)
		rc()
		return errors.Wrapf(err, "node lease %x", int64(lease.ID))
	case err := <-watchErr:
		return err
	}
}
