//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/loadtest/live"
	ltreport "github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/services/gang"
)

func (a *app) loadtest(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Load-test the real services (admission, placement, gang, drain) over real NATS and etcd with
		thousands of virtual nodes in this process. Without --nats, --etcd or --context it starts an
		embedded cluster on free loopback ports, with auth as ` + "`lockstep dev`" + ` runs it (--insecure: without);
		with them it adds virtual nodes and load to that cluster, connecting as every client does
		(flags, then LOCKSTEP_* variables, then the context; admin's credentials on a cluster with auth),
		and starts no services. Open-loop arrivals, bounded by --count/--span and --deadline. Writes
		summary.md, results.json and plots to a report folder. --compare-auth runs the stream insecure
		and with auth (--rounds times, alternating the order) and writes compare.md. See docs/loadtest.md.`)
	fs := cmd.Flags()
	insecure := fs.Bool("insecure", false, "embedded cluster: run it without authentication (default: NATS creds for every service and node, etcd over TLS with client certificates, jobs submitted as dev's user alice)")
	submitCreds := fs.String("submit-creds", "", "creds file of the user to submit the jobs as, on that user's subject (default: the connection's creds; embedded with auth: alice's)")
	compareAuth := fs.Bool("compare-auth", false, "embedded cluster: run the same stream on fresh clusters insecure and with auth, and report both and their ratios (compare.md)")
	rounds := fs.Int("rounds", 1, "--compare-auth: rounds of one insecure and one auth run each, alternating which goes first")
	cl := clusterFlags(fs, 1000, 16, 8)
	tracePath := fs.String("trace", "synthetic", "\"synthetic\" or a Philly-format trace to replay (see --speedup)")
	speedup := fs.Float64("speedup", 3600, "trace replay: divide submission offsets and run times by this")
	jobs := fs.Int("jobs", 0, "trace replay: only the first N jobs (0: all)")
	syn := syntheticFlags(fs)
	seed := fs.Uint64("seed", 1, "seed of the synthetic stream")
	timeLimit := fs.Duration("time-limit", 0, "every job's timeLimit (0: none; reservations, backfill and topology holds need one, as Slurm's backfill does)")
	perLease := fs.Int("nodes-per-lease", 250, "virtual nodes sharing one etcd lease")
	raw := fs.Int("raw-txns", 2000, "raw etcd reservation transactions before and after the load (0: skip)")
	rawClients := fs.Int("raw-clients", gang.DefaultWorkers, "concurrent clients of the raw etcd measurement (default: as many as the gang service's workers)")
	drain := fs.Duration("drain", 2*time.Minute, "after the last submission, wait at most this long for jobs to end")
	deadline := fs.Duration("deadline", 20*time.Minute, "bound on the whole load phase")
	noFsync := fs.Bool("no-fsync", false, "embedded etcd without fsync (not for benchmarks)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the load phase (embedded: includes the services)")
	allocProfile := fs.String("memprofile", "", "write heap profiles of the load phase's end to `FILE` and of its start to FILE.base (embedded: includes the services); go tool pprof -sample_index=alloc_space -base FILE.base BIN FILE shows what it allocated")
	out := fs.String("out", "", "report folder (default loadtest/reports/<time>)")
	verbose := fs.BoolP("verbose", "v", false, "log the services' warnings")
	scenario := fs.String("scenario", "", "preset stream and cluster (flags given win): burst, burst-switches, poisson, probe (docs/loadtest.md)")
	return func(cmd *cobra.Command, _ []string) error {
		ctx, env := cmd.Context(), a.env
		if *scenario != "" {
			if err := loadtestScenarios.apply(fs, *scenario); err != nil {
				return err
			}
		}
		if *speedup <= 0 {
			return usagef("--speedup must be positive")
		}
		if *rawClients < 1 || *rawClients > 1024 {
			return usagef("--raw-clients: %d is outside 1..1024", *rawClients)
		}
		external, err := loadtestTarget(cmd.Flags(), *insecure, *compareAuth)
		if err != nil {
			return err
		}
		if *compareAuth && (*cpuProfile != "" || *allocProfile != "") {
			return usagef("--cpuprofile and --memprofile profile one run: leave out --compare-auth")
		}
		if *timeLimit < 0 {
			return usagef("--time-limit: %s is negative", *timeLimit)
		}
		if *rounds < 1 || *rounds > 10 {
			return usagef("--rounds: %d is outside 1..10", *rounds)
		}
		c, err := cl.build("vn-")
		if err != nil {
			return err
		}
		stream, name, err := loadStream(*tracePath, syn, *seed, "")
		if err != nil {
			return err
		}
		if *tracePath != "synthetic" {
			stream = trace.Head(stream, *jobs)
			for i := range stream {
				stream[i].Submit = time.Duration(float64(stream[i].Submit) / *speedup)
				stream[i].Duration = time.Duration(float64(stream[i].Duration) / *speedup)
			}
			name = fmt.Sprintf("%s, %s jobs, ×%g faster", name, ltreport.Thousands(len(stream)), *speedup)
		}
		started := time.Now()
		dir, err := ltreport.Dir(*out, started)
		if err != nil {
			return err
		}
		log := slog.New(slog.DiscardHandler)
		if *verbose {
			log = newLeveledLogger(env, slog.LevelWarn)
		}
		cfg := live.Config{
			NoFsync: *noFsync, Auth: !*insecure, SubmitCreds: *submitCreds, Cluster: c, Jobs: stream, TimeLimit: *timeLimit,
			NodesPerLease: *perLease, RawTxns: *raw, RawWorkers: *rawClients, Drain: *drain, Deadline: *deadline, CPUProfile: *cpuProfile, AllocProfile: *allocProfile, Log: log,
		}
		if external {
			conn, err := a.connection()
			if err != nil {
				return err
			}
			cfg.NATSURL, cfg.Etcd, cfg.Credentials, cfg.Auth = conn.NATS, conn.Etcd, conn.Credentials, false
		}
		rep := live.Report{Run: ltreport.NewRun("loadtest", started, *seed), Stream: name, Cluster: c.Name}
		if *compareAuth {
			return compareLoadtest(ctx, env, cfg, rep, dir, *rounds)
		}
		res, err := loadtestOnce(ctx, env, cfg, rep, dir, "load")
		if err != nil {
			return err
		}
		// Without --raw-txns there is no baseline to divide by: say so
		// rather than "0.00 × raw etcd (0 Txn/s)".
		raw := "raw etcd not measured"
		if res.RawPerSec > 0 {
			raw = fmt.Sprintf("%.2f × raw etcd (%.0f Txn/s)", res.RatioToRaw, res.RawPerSec)
		}
		fmt.Fprintf(env.stdout, "%d jobs at %s/s offered: %.1f running/s sustained; submit → running p50 %.0f ms, p99 %.0f ms; reservations %.1f/s, %s\n",
			res.Submitted, ltreport.Rate(res.OfferedRate), res.SustainedPerSec, res.ToRunning.P50, res.ToRunning.P99, res.ReservedPerSec, raw)
		fmt.Fprintf(env.stdout, "report: %s/summary.md\n", dir)
		return bookkeeping(res)
	}
}

// loadtestTarget says whether the command line names an existing cluster
// (--nats, --etcd or --context: then every connection setting resolves as
// for any client) rather than asking for an embedded one, and rejects
// flags that do not fit the choice. Only the command line decides: a
// LOCKSTEP_* variable or a current context left over from `lockstep dev`
// does not turn the default embedded run into a run against that cluster.
func loadtestTarget(fs *pflag.FlagSet, insecure, compareAuth bool) (external bool, err error) {
	var credFlags []string
	fs.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "nats", "etcd", "context":
			external = true
		case "creds", "tls-ca", "tls-cert", "tls-key", "etcd-ca", "etcd-cert", "etcd-key":
			credFlags = append(credFlags, "--"+f.Name)
		}
	})
	switch {
	case external && (insecure || compareAuth):
		return false, usagef("--insecure and --compare-auth shape the embedded cluster; an existing cluster's auth is what its credentials say")
	case !external && len(credFlags) > 0:
		return false, usagef("%v: credentials are for an existing cluster; name it with --context or --nats/--etcd (the embedded one issues its own)", credFlags)
	}
	return external, nil
}

// loadtestOnce runs the load once and writes its report to dir (made if
// missing).
func loadtestOnce(ctx context.Context, env *cliEnv, cfg live.Config, rep live.Report, dir, label string) (*live.Result, error) {
	dir, err := ltreport.Dir(dir, time.Now())
	if err != nil {
		return nil, err
	}
	bar := ltreport.NewProgress(env.stderr, label, 2)
	cfg.Progress = func(sub, ended float64) { bar.Set(sub + ended) }
	res, err := live.Run(ctx, cfg)
	bar.Done()
	if err != nil {
		return nil, err
	}
	rep.Result = res
	if err := rep.Write(dir); err != nil {
		return nil, err
	}
	return res, nil
}

// compareLoadtest runs the same stream on fresh embedded clusters without
// auth and with it, rounds times, alternating which goes first, and
// reports both sides and their ratios.
func compareLoadtest(ctx context.Context, env *cliEnv, cfg live.Config, rep live.Report, dir string, rounds int) error {
	cmp := live.Comparison{Run: rep.Run, Stream: rep.Stream, Cluster: rep.Cluster}
	cmp.Kind = "loadtest-compare-auth"
	for round := 1; round <= rounds; round++ {
		order := []bool{false, true}
		if round%2 == 0 {
			order = []bool{true, false}
		}
		for _, withAuth := range order {
			name, label := "insecure", "insecure"
			if withAuth {
				name, label = "auth", "auth + TLS"
			}
			cfg.Auth = withAuth
			rep.Started = time.Now().UTC()
			res, err := loadtestOnce(ctx, env, cfg, rep, filepath.Join(dir, fmt.Sprintf("%s-%d", name, round)), label)
			if err == nil {
				err = bookkeeping(res)
			}
			if err != nil {
				// The rounds done so far still compare.
				done := round - 1
				if done > 0 {
					cmp.Insecure, cmp.Auth = cmp.Insecure[:done], cmp.Auth[:done]
					printComparison(env, cmp, dir)
				}
				return errors.Wrapf(err, "round %d, %s", round, label)
			}
			if withAuth {
				cmp.Auth = append(cmp.Auth, res)
			} else {
				cmp.Insecure = append(cmp.Insecure, res)
			}
		}
	}
	return printComparison(env, cmp, dir)
}

// printComparison writes compare.md and prints its table.
func printComparison(env *cliEnv, cmp live.Comparison, dir string) error {
	if err := cmp.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%d jobs at %s/s offered, %d round(s) insecure and with auth (%s):\n\n%s\nreport: %s/compare.md\n",
		cmp.Insecure[0].Submitted, ltreport.Rate(cmp.Insecure[0].OfferedRate), len(cmp.Insecure), cmp.Auth[0].Auth, cmp.Table(), dir)
	return nil
}

// bookkeeping fails the command when a run lost track of a job.
func bookkeeping(res *live.Result) error {
	if !res.BookkeepingOK() {
		return &exitError{code: 1, msg: "bookkeeping: " + res.Bookkeeping[0]}
	}
	return nil
}
