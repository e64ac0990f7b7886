// Package devcluster runs a whole Lockstep cluster in one process: embedded
// NATS (JetStream on disk) and etcd, the five services, and simulated nodes
// whose GPUs are indices but whose ranks are real processes. It backs
// `lockstep dev`, the end-to-end tests and the load-test harness. Each
// service still gets its own NATS and etcd connections and talks to the
// others only through them, exactly as when they run as separate processes.
//
// It is wiring, not a service, so it lives in deploy/ beside the other way
// of running the whole system (the compose cluster), not among the five
// services.
package devcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/services/agent/discover/fake"
	"github.com/lockstep-dev/lockstep/services/drain"
	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/services/placement"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/embedded"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry/otelsdk"
)

// Config shapes the dev cluster.
type Config struct {
	DataDir    string
	NATSListen string
	EtcdListen string
	// Nodes × GPUsPerNode simulated GPUs, spread evenly over Leaves leaf
	// switches under one spine.
	Nodes       int
	GPUsPerNode int
	Leaves      int
	// NodeTTL, LaunchTimeout and ReservationTTL override the service
	// defaults when set.
	NodeTTL        time.Duration
	LaunchTimeout  time.Duration
	ReservationTTL time.Duration
	// Retention is how long finished job records, and the nodes' attempt
	// directories, are kept (0: the services' default, 7 days).
	Retention time.Duration
	// Replicas runs this many copies of admission, placement, gang and drain.
	Replicas int
	// Topology is the switch tree (nil: from the simulated nodes' labels);
	// Queues the queue policy.
	Topology *topology.Topology
	Queues   queue.Config
	// NoFsync turns etcd fsync off (tests only).
	NoFsync bool
	Log     *slog.Logger
	// MetricsAddr is where /metrics, /healthz and /readyz are served for the
	// whole cluster ("" for nowhere; ":0" picks a port, see MetricsAddr).
	MetricsAddr string
	// Every span goes to DataDir/spans.jsonl (for `lockstep trace`) unless
	// NoSpanFile, to SpanExporters (tests), and to an OTLP collector when
	// OTEL_EXPORTER_OTLP_ENDPOINT is set.
	NoSpanFile    bool
	SpanExporters []sdktrace.SpanExporter
	// Auth turns authentication on: an authority in DataDir/authority, NATS
	// in operator mode, every service and node connecting with its own
	// creds, and creds for admin, alice and bob in DataDir/creds. The zero
	// value runs without auth, as the tests and the load test do.
	Auth bool
	// Health turns on the GPU health checks of the named nodes' agents
	// (FakeHealth gives one a simulated nvidia-smi whose GPUs can be broken).
	Health map[string]agent.HealthConfig
	// ShimTarget is the lockstep binary the agents' Slurm command shims
	// (srun, scontrol, … on jobs' PATH) link to; "" is this process's own
	// executable, right for `lockstep dev`, not for a test binary.
	ShimTarget string
	// ContainerRuntime is the agents' --container-runtime ("" or none:
	// container jobs are refused; docker: run through the local engine).
	ContainerRuntime string
	// WebListen is where the dashboard (services/web) is served; "" runs
	// none, ":0" picks a port (see WebAddr).
	WebListen string
}

// Validate checks the shape.
func (c *Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("--data-dir: required")
	case c.Nodes < 1 || c.Nodes > 1024:
		return errors.Newf("--nodes: %d is not between 1 and 1024", c.Nodes)
	case c.GPUsPerNode < 1 || c.GPUsPerNode > 64:
		return errors.Newf("--gpus-per-node: %d is not between 1 and 64", c.GPUsPerNode)
	case c.Leaves < 1 || c.Leaves > c.Nodes:
		return errors.Newf("--leaves: %d is not between 1 and the node count %d", c.Leaves, c.Nodes)
	case c.Replicas < 0 || c.Replicas > 5:
		return errors.Newf("--replicas: %d is not between 1 and 5", c.Replicas)
	}
	// Checked here, under dev's own flags, before any server starts: the
	// agents would refuse the TTL as their --lease-ttl, and gang the
	// timeout, once NATS and etcd ran.
	if err := config.LaunchTimeout("--launch-timeout", c.LaunchTimeout); err != nil {
		return err
	}
	return config.LeaseTTL("--node-ttl", c.NodeTTL)
}

// Cluster is a running dev cluster.
type Cluster struct {
	NATSURL      string
	EtcdEndpoint string
	// CredsDir holds the creds files when Config.Auth is on ("" otherwise);
	// Admin is what admin connects with (zero without auth).
	CredsDir string
	Admin    connection.Credentials

	cfg    Config
	auth   *devAuth // nil without Config.Auth
	nats   *embedded.NATS
	etcd   *embedded.Etcd
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   chan error
	ctx    context.Context

	tel    *otelsdk.Telemetry
	health *telemetry.Health
	// metricsAddr is the address /metrics is served on ("" for none).
	metricsAddr string
	// webAddr is the dashboard's address ("" for none).
	webAddr string

	mu    sync.Mutex
	procs map[string]*proc
}

// proc is one service instance: it can be killed and started again.
type proc struct {
	run    func(context.Context) error
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Start brings the cluster up and returns once every service has started.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	// dev's admin user (admin.creds, the CLI's default there) acts on
	// everyone's jobs. Copied so the caller's policy is left as it was.
	cfg.Queues.Admins = append(slices.Clone(cfg.Queues.Admins), "admin")
	nc := embedded.NATSConfig{Listen: cfg.NATSListen, StoreDir: filepath.Join(cfg.DataDir, "nats")}
	var da *devAuth
	if cfg.Auth {
		var err error
		if da, err = newDevAuth(cfg.DataDir, cfg.EtcdListen); err != nil {
			return nil, err
		}
		nc.Trust = &da.trust
	}
	ns, err := embedded.StartNATS(nc)
	if err != nil {
		return nil, errors.WithHint(err, "is another `lockstep dev` running? pick another --nats-listen")
	}
	ec := embedded.EtcdConfig{Listen: cfg.EtcdListen, Dir: filepath.Join(cfg.DataDir, "etcd"), NoFsync: cfg.NoFsync}
	if da != nil {
		ec.TLS = &da.etcdServer
	}
	es, err := embedded.StartEtcd(ec)
	if err != nil {
		ns.Close()
		return nil, errors.WithHint(err, "is another `lockstep dev` running? pick another --etcd-listen")
	}
	if da != nil {
		if err := da.startEtcdAuth(ctx, es.Endpoint()); err != nil {
			es.Close()
			ns.Close()
			return nil, err
		}
	}
	if err := ensureStreams(ctx, ns.URL(), da); err != nil {
		da.close()
		es.Close()
		ns.Close()
		return nil, err
	}
	tel, err := startTelemetry(ctx, cfg)
	if err != nil {
		da.close()
		es.Close()
		ns.Close()
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	c := &Cluster{
		NATSURL: ns.URL(), EtcdEndpoint: es.Endpoint(), cfg: cfg, auth: da, nats: ns, etcd: es,
		tel: tel, health: telemetry.NewHealth(),
		cancel: cancel, errs: make(chan error, 64), ctx: cctx, procs: map[string]*proc{},
	}
	if da != nil {
		c.CredsDir = da.dir
		if c.Admin, err = da.adminCredentials(); err != nil {
			cancel()
			_ = tel.Shutdown(ctx)
			da.close()
			es.Close()
			ns.Close()
			return nil, err
		}
	}
	// Ready once every kind of service serves (each adds itself when up).
	c.health.Require("admission", "placement", "gang", "drain", "agent")
	if cfg.MetricsAddr != "" {
		if c.metricsAddr, err = otelsdk.Serve(cctx, cfg.MetricsAddr, otelsdk.Handler(tel, c.health)); err != nil {
			cancel()
			_ = tel.Shutdown(ctx)
			da.close()
			es.Close()
			ns.Close()
			return nil, errors.WithHint(err, "is another `lockstep dev` running? pick another --metrics-addr")
		}
	}
	for i := range cfg.Replicas {
		inst := fmt.Sprintf("dev-%d", i+1)
		c.add(fmt.Sprintf("admission-%d", i+1), func(ctx context.Context) error {
			b, err := c.serviceBase(auth.RoleAdmission, inst)
			if err != nil {
				return err
			}
			return admission.Run(ctx, admission.Config{Base: b, Queues: cfg.Queues})
		})
		c.add(fmt.Sprintf("placement-%d", i+1), func(ctx context.Context) error {
			b, err := c.serviceBase(auth.RolePlacement, inst)
			if err != nil {
				return err
			}
			return placement.Run(ctx, placement.Config{Base: b, Topology: cfg.Topology, Queues: cfg.Queues, Retention: cfg.Retention})
		})
		c.add(fmt.Sprintf("gang-%d", i+1), func(ctx context.Context) error {
			b, err := c.serviceBase(auth.RoleGang, inst)
			if err != nil {
				return err
			}
			return gang.Run(ctx, gang.Config{Base: b, LaunchTimeout: cfg.LaunchTimeout, ReservationTTL: cfg.ReservationTTL})
		})
		c.add(fmt.Sprintf("drain-%d", i+1), func(ctx context.Context) error {
			b, err := c.serviceBase(auth.RoleDrain, inst)
			if err != nil {
				return err
			}
			return drain.Run(ctx, drain.Config{Base: b, Queues: cfg.Queues})
		})
	}
	if cfg.WebListen != "" {
		if err := c.startWeb(cfg.WebListen); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for _, n := range SimulatedNodes(cfg.Nodes, cfg.GPUsPerNode, cfg.Leaves) {
		c.StartAgent(n)
	}
	if err := c.waitNodes(ctx, cfg.Nodes); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// waitReady returns once every service serves (its consumers and
// request handlers are up), so a command run right after Start, such as
// `lockstep node list` (answered by drain), finds someone to answer it.
func (c *Cluster) waitReady(ctx context.Context) error {
	return c.waitFor(ctx, "services not ready", func() string {
		lines, err := c.health.Status(ctx)
		switch {
		case err == nil:
			return ""
		case len(lines) == 0:
			return err.Error() // never "": that would read as ready
		}
		return strings.Join(lines, "; ")
	})
}

// waitFor polls check until it says nothing is missing (""), a service
// fails, ctx ends or 60 s pass; the error then says what was still missing.
func (c *Cluster) waitFor(ctx context.Context, what string, check func() (missing string)) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		missing := check()
		if missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Newf("%s after 60s: %s", what, missing)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-c.errs:
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startTelemetry sets up one tracer provider per service instance (each
// with its own service.name) over shared exporters: the span file in the
// data dir, the caller's exporters, and OTLP when the environment asks.
func startTelemetry(ctx context.Context, cfg Config) (*otelsdk.Telemetry, error) {
	tc := otelsdk.Config{Service: "dev", Instance: "dev", PerServiceNames: true, SpanExporters: cfg.SpanExporters, Log: cfg.Log}
	if !cfg.NoSpanFile {
		tc.SpanFile = SpanFile(cfg.DataDir)
	}
	return otelsdk.Setup(ctx, tc)
}

// SpanFile is where a dev cluster with this data dir writes its spans.
func SpanFile(dataDir string) string { return filepath.Join(dataDir, telemetry.SpanFileName) }

// MetricsAddr is the address /metrics, /healthz and /readyz are served on
// ("" when Config.MetricsAddr was empty).
func (c *Cluster) MetricsAddr() string { return c.metricsAddr }

// FlushSpans exports every span finished so far.
func (c *Cluster) FlushSpans(ctx context.Context) error { return c.tel.ForceFlush(ctx) }

// ensureStreams declares the streams before any service or client uses
// them, as admin when the cluster has auth.
func ensureStreams(ctx context.Context, url string, da *devAuth) error {
	var opts []bus.Option
	if da != nil {
		creds, err := da.creds(auth.Identity{Name: "admin", Role: auth.RoleAdmin})
		if err != nil {
			return err
		}
		opts = append(opts, bus.WithCreds(creds))
	}
	b, err := bus.Connect(ctx, url, "lockstep-dev", opts...)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.EnsureStreams(ctx, bus.StreamOptions{Replicas: 1})
}

// waitNodes returns once n nodes are registered, so a job submitted right
// after Start is judged against the whole cluster.
func (c *Cluster) waitNodes(ctx context.Context, n int) error {
	cli, err := store.Connect(ctx, c.EtcdEndpoint, store.WithCredentials(c.Admin))
	if err != nil {
		return err
	}
	defer cli.Close()
	return c.waitFor(ctx, "nodes not registered", func() string {
		resp, err := cli.Get(ctx, store.NodesPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		switch {
		case err != nil:
			return err.Error()
		case resp.Count < int64(n):
			return fmt.Sprintf("only %d of %d nodes registered", resp.Count, n)
		}
		return ""
	})
}

func (c *Cluster) base(instance string) config.Base {
	return config.Base{NATSURL: c.NATSURL, Etcd: c.EtcdEndpoint, StreamReplicas: 1, Instance: instance, Log: c.cfg.Log,
		Telemetry: c.tel, Health: c.health}
}

// serviceBase is base with the identity's credentials when the cluster has
// auth: each service kind and each node connects as itself.
func (c *Cluster) serviceBase(role auth.Role, instance string) (config.Base, error) {
	b := c.base(instance)
	if c.auth == nil {
		return b, nil
	}
	id := auth.Identity{Name: string(role), Role: role}
	if role == auth.RoleNode {
		id.Name = instance
	}
	creds, err := c.auth.identity(c.ctx, id)
	b.Credentials = creds
	return b, err
}

// add registers a service instance and starts it.
func (c *Cluster) add(name string, run func(context.Context) error) {
	c.mu.Lock()
	c.procs[name] = &proc{run: run}
	c.mu.Unlock()
	c.Start(name)
}

// Start (re)starts a registered service instance that is not running.
func (c *Cluster) Start(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.procs[name]
	if p == nil || (p.done != nil && !closed(p.done)) {
		return
	}
	ctx, cancel := context.WithCancelCause(c.ctx)
	p.cancel, p.done = cancel, make(chan struct{})
	done := p.done
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(done)
		if err := p.run(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Log.Error("service stopped", "service", name, "err", err)
			c.errs <- errors.Wrapf(err, "%s", name)
		}
	}()
}

// Kill stops a service instance as a crash would (no graceful goodbyes)
// and waits until it has stopped.
func (c *Cluster) Kill(name string) { c.stop(name, config.ErrSimulatedCrash) }

// StopService stops a service instance cleanly and waits until it has stopped.
func (c *Cluster) StopService(name string) { c.stop(name, context.Canceled) }

func (c *Cluster) stop(name string, cause error) {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p == nil || p.done == nil {
		return
	}
	p.cancel(cause)
	<-p.done
}

// Services lists the registered service instances, sorted.
func (c *Cluster) Services() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.procs))
	for n := range c.procs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// DataDir is the cluster's data directory (a node's agent has
// DataDir/nodes/<node>).
func (c *Cluster) DataDir() string { return c.cfg.DataDir }

// AgentName is the service name of a node's agent.
func AgentName(node string) string { return "agent-" + node }

// StartAgent registers and runs an agent for one simulated node.
func (c *Cluster) StartAgent(n domain.Node) {
	dir := filepath.Join(c.cfg.DataDir, "nodes", n.Name)
	c.add(AgentName(n.Name), func(ctx context.Context) error {
		b, err := c.serviceBase(auth.RoleNode, n.Name)
		if err != nil {
			return err
		}
		return agent.Run(ctx, agent.Config{Base: b, Node: n, DataDir: dir, LeaseTTL: c.cfg.NodeTTL, Retention: c.cfg.Retention,
			// Demo users (alice, bob) rarely have accounts on the machine.
			MapUnknownUsersTo: "nobody", Health: c.cfg.Health[n.Name], ShimTarget: c.cfg.ShimTarget,
			ContainerRuntime: c.cfg.ContainerRuntime})
	})
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Errors reports services that stopped with an error.
func (c *Cluster) Errors() <-chan error { return c.errs }

// Stop shuts every service down, then the servers.
func (c *Cluster) Stop() {
	c.cancel()
	c.wg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.tel.Shutdown(sctx); err != nil {
		c.cfg.Log.Warn("telemetry shutdown", "err", err)
	}
	c.auth.close()
	c.etcd.Close()
	c.nats.Close()
}

// SimulatedNodes lays out n nodes of g GPUs over the given number of leaf
// switches under one spine. Each is what discovery finds on a simulated
// machine of SimulatedShape(g): the agent code that reads a real node's
// sysfs and nvidia-smi reads a generated tree and a stub, so a dev node has
// the CPUs, NUMA nodes and NICs of a real one, and gangs are placed and
// pinned on it exactly as on metal. Simulated stays set: the GPUs are not
// there.
func SimulatedNodes(n, g, leaves int) []domain.Node {
	perLeaf := (n + leaves - 1) / leaves
	out := make([]domain.Node, 0, n)
	for i := range n {
		name := fmt.Sprintf("node-%02d", i+1)
		node := domain.Node{Name: name, Addr: "127.0.0.1", Leaf: fmt.Sprintf("leaf-%d", i/perLeaf+1), Spine: "spine-1"}
		inv, err := discoverSimulated(name, SimulatedShape(g))
		if err != nil {
			// The shapes are fixed and valid for every g Config allows.
			panic(errors.Wrapf(err, "simulated node %s", name))
		}
		inv.FillNode(&node)
		node.Simulated = true
		out = append(out, node)
	}
	return out
}

// SimulatedShape is the machine a dev node of g GPUs simulates: a DGX H100
// (2 sockets × 56 cores with SMT, 2 NUMA nodes, 8 H100 and 8 ConnectX-7
// NICs, four of each per NUMA node) for g = 8; for other g the same CPUs
// with g GPUs and g NICs, split over the two NUMA nodes when g is even.
func SimulatedShape(g int) fake.Shape {
	s := fake.DGXH100()
	if g%2 == 0 {
		s.GPUsPerNUMA, s.NICsPerNUMA = g/2, g/2
	} else {
		s.NUMANodes, s.GPUsPerNUMA, s.NICsPerNUMA = 1, g, g
	}
	return s
}

// discoverSimulated runs discovery over a simulated machine.
func discoverSimulated(host string, s fake.Shape) (discover.Inventory, error) {
	m, err := fake.New(host, s)
	if err != nil {
		return discover.Inventory{}, err
	}
	return discover.Discover(context.Background(), m.Sources())
}

// DefaultDataDir is where `lockstep dev` keeps its state: the user's cache
// directory, or /var/lib/lockstep/dev for root.
func DefaultDataDir() string {
	// As root, ranks run as their owners (or nobody), who must be able to
	// enter their attempt directories: root's home is closed to them.
	if os.Geteuid() == 0 {
		return filepath.Join("/var/lib", "lockstep", "dev")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "lockstep", "dev")
	}
	return filepath.Join(os.TempDir(), "lockstep-dev")
}
