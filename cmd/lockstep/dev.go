//go:build !lockstep_client

package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/web"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

func (a *app) dev(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Run the whole system in one process: embedded NATS (JetStream, on disk) and etcd,
		the five services, and simulated nodes whose ranks are real processes.
		State survives restarts on the same --data-dir.`)
	cfg := devcluster.Config{}
	fs := cmd.Flags()
	fs.StringVar(&cfg.DataDir, "data-dir", devcluster.DefaultDataDir(), "where NATS, etcd and rank logs keep their data")
	fs.StringVar(&cfg.NATSListen, "nats-listen", "127.0.0.1:4222", "NATS client address")
	fs.StringVar(&cfg.EtcdListen, "etcd-listen", "127.0.0.1:2379", "etcd client address")
	fs.IntVarP(&cfg.Nodes, "nodes", "N", 8, "simulated nodes")
	fs.IntVar(&cfg.GPUsPerNode, "gpus-per-node", 8, "GPUs per simulated node; each node is discovered from a simulated DGX H100-like machine (2 × 56 cores with SMT, 2 NUMA nodes, a NIC per GPU)")
	fs.IntVar(&cfg.Leaves, "leaves", 2, "leaf switches the nodes are spread over")
	fs.DurationVar(&cfg.NodeTTL, "node-ttl", 0, "node lease TTL (default 10s)")
	fs.DurationVar(&cfg.LaunchTimeout, "launch-timeout", 0, "launch barrier timeout (default 60s)")
	retention := retentionFlag(fs)
	fs.IntVar(&cfg.Replicas, "replicas", 1, "replicas of admission, placement, gang and drain")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", config.DevMetricsAddr, "serve /metrics, /healthz and /readyz here (\"\" to disable)")
	fs.StringVar(&cfg.WebListen, "web-listen", web.DefaultListen, "serve the dashboard here (\"\" to disable; beyond loopback only with auth on)")
	verbose := fs.BoolP("verbose", "v", false, "log every service's info messages (default: warnings only)")
	topo := topologyFlag(fs, "switch tree file (YAML, Slurm topology.conf or Lingjun CSV); default: from the simulated nodes' labels")
	queues := queuesFlag(fs, "quotas and fair-share weights")
	ctrRuntime := choice{value: agent.RuntimeNone, allowed: []string{agent.RuntimeNone, agent.RuntimeDocker}}
	fs.Var(&ctrRuntime, "container-runtime", "run container jobs (spec container:) on the local engine: docker (Docker, or Podman's API service at $DOCKER_HOST), or none to refuse them")
	insecure := fs.Bool("insecure", false, "run without authentication: anyone who reaches NATS may do anything (default: creds for every service, node and admin, alice, bob in <data-dir>/creds)")
	return func(cmd *cobra.Command, _ []string) error {
		ctx, env := cmd.Context(), a.env
		var err error
		if cfg.Queues, err = queues(); err != nil {
			return err
		}
		if cfg.Topology, err = topo(); err != nil {
			return err
		}
		cfg.Retention = *retention
		if err := checkRetention(cfg.Retention); err != nil {
			return err
		}
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("--data-dir: %w", err)
		}
		level := slog.LevelWarn
		if *verbose {
			level = slog.LevelInfo
		}
		cfg.Log = newLeveledLogger(env, level)
		cfg.Auth = !*insecure
		cfg.ContainerRuntime = ctrRuntime.value
		if *insecure {
			fmt.Fprintln(env.stderr, "WARNING: --insecure: authentication is OFF. Anyone who can reach this NATS or etcd can submit, cancel and drain anything, and forge any service's messages.")
		}
		return runDevCluster(ctx, env, cfg, a.configFlag(cmd))
	}
}

// runDevCluster starts the dev cluster, says how to use it and runs it
// until ctx ends or a part of it fails. configFile is --config ("" when
// not given: the environment's choice).
func runDevCluster(ctx context.Context, env *cliEnv, cfg devcluster.Config, configFile string) error {
	c, err := devcluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	// Its own error: the cluster runs, only the convenience is missing, and
	// dev's exit status is the cluster's.
	configPath := cmp.Or(configFile, connection.ConfigPath(os.Getenv))
	cliLine, current, ctxErr := writeDevContext(configPath, c)
	written := ctxErr == nil
	if ctxErr != nil {
		cliLine = "not configured: " + ctxErr.Error()
	}
	flags := devCommandFlags(os.Getenv, c, written, current)
	if written && configFile != "" { // commands find it only through the flag
		flags = " --config " + configFile + flags
	}
	authLine := "OFF (--insecure)"
	if c.CredsDir != "" {
		authLine = "on; creds for admin, alice and bob in " + c.CredsDir
	}
	dashboard := "off"
	if a := c.WebAddr(); a != "" {
		dashboard = "http://" + a
		if c.CredsDir != "" {
			dashboard += " (sign in with the token `lockstep web token` prints)"
		}
	}
	metrics := "off"
	if a := c.MetricsAddr(); a != "" {
		metrics = "http://" + a + "/metrics (also /healthz, /readyz)"
	}
	fmt.Fprintf(env.stdout, `Lockstep dev cluster is up.
  NATS       %s
  etcd       %s
  nodes      %s × %s over %s
  data dir   %s
  web        %s
  metrics    %s
  traces     %s
  auth       %s
  CLI        %s

Try:  lockstep submit docs/examples/hello.json --wait%s
      lockstep queue%s
      lockstep trace JOB_ID
Ctrl-C stops it; state is kept in the data dir.
`, c.NATSURL, c.EtcdEndpoint, plural(cfg.Nodes, "node"), plural(cfg.GPUsPerNode, "GPU"), leafSwitches(cfg.Leaves), cfg.DataDir, dashboard, metrics, devcluster.SpanFile(cfg.DataDir),
		authLine, cliLine, flags, flags)
	select {
	case <-ctx.Done():
		fmt.Fprintln(env.stdout, "stopping…")
	case err = <-c.Errors():
	}
	c.Stop()
	return err
}

// leafSwitches is "1 leaf switch", "2 leaf switches".
func leafSwitches(n int) string {
	if n == 1 {
		return "1 leaf switch"
	}
	return fmt.Sprintf("%d leaf switches", n)
}

// devContext is the name of the CLI config context `lockstep dev` writes.
const devContext = "dev"

// writeDevContext points the CLI config's "dev" context at c, acting as
// admin, so that the README tour works with no flag. It becomes the
// current context only when the file has no other: a user's choice of
// cluster is never switched. It returns what it did, for the banner.
func writeDevContext(path string, c *devcluster.Cluster) (line string, current bool, err error) {
	a := c.Admin
	ctx := connection.Context{NATS: c.NATSURL, Creds: a.Creds, TLSCA: a.TLSCA, TLSCert: a.TLSCert, TLSKey: a.TLSKey,
		Etcd: c.EtcdEndpoint, EtcdCA: a.EtcdCA, EtcdCert: a.EtcdCert, EtcdKey: a.EtcdKey}
	current, err = connection.SetContext(path, devContext, ctx)
	if err != nil {
		return "", false, err
	}
	if current {
		return fmt.Sprintf("context %q in %s is current: commands act as admin", devContext, path), true, nil
	}
	return fmt.Sprintf("context %q written to %s; your current context is unchanged (use --context %s)", devContext, path, devContext), false, nil
}

// devCommandFlags are the flags the commands the banner suggests need to
// reach this cluster (with a leading space), by the CLI's precedence
// (flag > environment > context): none when the dev context is current
// and no LOCKSTEP_NATS/NATS_URL points elsewhere; --context dev when it
// was written but is not current; --nats (when not the default) and
// --creds when no context could be written; --nats too when the
// environment would override the context's address.
func devCommandFlags(getenv func(string) string, c *devcluster.Cluster, written, current bool) string {
	var flags []string
	if written && !current {
		flags = append(flags, "--context", devContext)
	}
	envNATS := getenv("LOCKSTEP_NATS")
	if envNATS == "" {
		envNATS = getenv("NATS_URL")
	}
	switch {
	case written && envNATS != "" && envNATS != c.NATSURL:
		flags = append(flags, "--nats", c.NATSURL)
	case !written && (c.NATSURL != connection.DefaultNATS || envNATS != "" && envNATS != c.NATSURL):
		flags = append(flags, "--nats", c.NATSURL)
	}
	if !written && c.Admin.Creds != "" {
		flags = append(flags, "--creds", c.Admin.Creds)
	}
	if len(flags) == 0 {
		return ""
	}
	return " " + strings.Join(flags, " ")
}

// newLeveledLogger logs text to a terminal and JSON otherwise.
func newLeveledLogger(env *cliEnv, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if f, ok := env.stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return slog.New(slog.NewTextHandler(env.stderr, opts))
		}
	}
	return slog.New(slog.NewJSONHandler(env.stderr, opts))
}
