package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/live"
	ltreport "github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/services/gang"
)

func runLoadtest(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "loadtest", "[flags]",
		"Load-test the real services (admission, placement, gang, drain) over real NATS and etcd with\n"+
			"thousands of virtual nodes in this process. Without --nats/--etcd it starts an embedded\n"+
			"cluster on free loopback ports; with them it adds virtual nodes and load to that cluster and\n"+
			"starts no services. Open-loop arrivals, bounded by --count/--span and --deadline. Writes\n"+
			"summary.md, results.json and plots to a report folder. See docs/loadtest.md.")
	natsURL := fs.String("nats", "", "NATS URL of an existing cluster (with --etcd); empty: embedded")
	etcdURL := fs.String("etcd", "", "etcd endpoint of an existing cluster (with --nats)")
	cl := clusterFlags(fs, 1000, 16, 8)
	tracePath := fs.String("trace", "synthetic", "\"synthetic\" or a Philly-format trace to replay (see --speedup)")
	speedup := fs.Float64("speedup", 3600, "trace replay: divide submission offsets and run times by this")
	jobs := fs.Int("jobs", 0, "trace replay: only the first N jobs (0: all)")
	syn := syntheticFlags(fs)
	seed := fs.Uint64("seed", 1, "seed of the synthetic stream")
	perLease := fs.Int("nodes-per-lease", 250, "virtual nodes sharing one etcd lease")
	raw := fs.Int("raw-txns", 2000, "raw etcd reservation transactions before and after the load (0: skip)")
	rawClients := fs.Int("raw-clients", gang.DefaultWorkers, "concurrent clients of the raw etcd measurement (default: as many as the gang service's workers)")
	drain := fs.Duration("drain", 2*time.Minute, "after the last submission, wait at most this long for jobs to end")
	deadline := fs.Duration("deadline", 20*time.Minute, "bound on the whole load phase")
	noFsync := fs.Bool("no-fsync", false, "embedded etcd without fsync (not for benchmarks)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the load phase (embedded: includes the services)")
	out := fs.String("out", "", "report folder (default loadtest/reports/<time>)")
	verbose := fs.Bool("v", false, "log the services' warnings")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("loadtest takes no arguments, got %q", fs.Args())
	}
	if *speedup <= 0 {
		return usagef("--speedup must be positive")
	}
	if *rawClients < 1 || *rawClients > 1024 {
		return usagef("--raw-clients: %d is outside 1..1024", *rawClients)
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
	bar := ltreport.NewProgress(env.stderr, "load", 2)
	res, err := live.Run(ctx, live.Config{
		NATSURL: *natsURL, Etcd: *etcdURL, NoFsync: *noFsync, Cluster: c, Jobs: stream,
		NodesPerLease: *perLease, RawTxns: *raw, RawWorkers: *rawClients, Drain: *drain, Deadline: *deadline, CPUProfile: *cpuProfile, Log: log,
		Progress: func(sub, ended float64) { bar.Set(sub + ended) },
	})
	bar.Done()
	if err != nil {
		return err
	}
	rep := live.Report{Kind: "loadtest", Command: ltreport.CommandLine(), Started: started.UTC(), Seed: *seed, Stream: name, Cluster: c.Name, Result: res}
	if err := rep.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%d jobs at %.0f/s offered: %.1f running/s sustained; submit → running p50 %.0f ms, p99 %.0f ms; "+
		"reservations %.1f/s = %.2f × raw etcd (%.0f Txn/s)\n",
		res.Submitted, res.OfferedRate, res.SustainedPerSec, res.ToRunning.P50, res.ToRunning.P99, res.ReservedPerSec, res.RatioToRaw, res.RawPerSec)
	fmt.Fprintf(env.stdout, "report: %s/summary.md\n", dir)
	if !res.BookkeepingOK() {
		return &exitError{code: 1, msg: "bookkeeping: " + res.Bookkeeping[0]}
	}
	return nil
}
