//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	ltreport "github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/sim"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

func (a *app) simulate(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Replay a job trace on a simulated cluster, in virtual time, through the same placement and
		queue code the services run, under Lockstep's policy and three baselines (per-pod
		Kubernetes default, Volcano-like gang, Slurm-like). Writes summary.md, results.json and
		plots to a report folder. See docs/loadtest.md.`)
	fs := cmd.Flags()
	tracePath := fs.String("trace", trace.DefaultPhilly(), "Philly-format trace (.csv or .csv.gz), or \"synthetic\"")
	jobs := fs.Int("jobs", 0, "replay only the first N jobs (0: all)")
	cl := clusterFlags(fs, 128, 8, 4)
	syn := syntheticFlags(fs)
	policies := fs.String("policies", "all", "comma-separated: per-pod, gang, slurm, lockstep (or all)")
	seed := fs.Uint64("seed", 1, "seed (placement tie-breaks, synthetic streams)")
	leafPen := fs.Float64("leaf-penalty", sim.DefaultLeafPenalty, "run-time stretch per extra leaf switch (negative: none)")
	spinePen := fs.Float64("spine-penalty", sim.DefaultSpinePenalty, "run-time stretch per extra spine (negative: none)")
	limit := fs.Float64("limit-factor", 1, "time limit = duration × factor (negative: no limits)")
	timeLimit := fs.Duration("time-limit", 0, "every job's time limit, whatever its duration (wins over --limit-factor; 0: use the factor)")
	window := fs.Int("window", sim.DefaultWindow, "pending jobs of each gang shape one pass considers")
	switchWait := fs.Duration("switch-wait", sim.DefaultSwitchWait, "Lockstep: how long multi-node jobs wait for their fewest leaves (negative: no constraint)")
	bf := fs.Duration("bf-interval", sim.DefaultBackfillInterval, "Slurm-like: backfill interval")
	queues := queuesFlag(fs, "as the placement service's --queues (quotas, weights, sizeHandicap)")
	out := fs.String("out", "", "report folder (default loadtest/reports/<time>)")
	scenario := fs.String("scenario", "", "preset stream and cluster (flags given win): burst, burst-switches, poisson (docs/loadtest.md)")
	seeds := fs.String("seeds", "", "run each of these seeds (1-5, or 1,4,9) and report every figure's mean and range over them; replaces --seed")
	parallel := fs.Int("parallel", 0, "with --seeds: seeds simulated at once (0: one per CPU)")
	return func(cmd *cobra.Command, _ []string) error {
		ctx, env := cmd.Context(), a.env
		if *scenario != "" {
			if err := simScenarios.apply(fs, *scenario); err != nil {
				return err
			}
		}
		if *timeLimit < 0 {
			return usagef("--time-limit: %s is negative", *timeLimit)
		}
		if *parallel < 0 {
			return usagef("--parallel: %d is negative", *parallel)
		}
		var list []uint64
		if *seeds != "" {
			if fs.Changed("seed") {
				return usagef("--seed and --seeds: give one of them")
			}
			var err error
			if list, err = parseSeeds(*seeds); err != nil {
				return usagef("--seeds: %v", err)
			}
		}
		pols, err := parsePolicies(*policies)
		if err != nil {
			return usagef("--policies: %v", err)
		}
		q, err := queues()
		if err != nil {
			return err
		}
		r := simRunner{
			cluster: cl, synthetic: syn, trace: *tracePath, jobs: *jobs, policies: pols, started: time.Now(),
			base: sim.Config{
				LeafPenalty: *leafPen, SpinePenalty: *spinePen, Window: *window, LimitFactor: *limit,
				TimeLimit: *timeLimit, SwitchWait: *switchWait, BackfillInterval: *bf, Queues: q,
			},
		}
		first := *seed
		if list != nil {
			first = list[0]
		}
		if err := r.prepare(first); err != nil {
			return err
		}
		// The simulator allocates freely (the queue policy builds a plan per
		// pass); collecting less often halves its run time, at the cost of
		// some memory.
		defer debug.SetGCPercent(debug.SetGCPercent(800))
		dir, err := ltreport.Dir(*out, r.started)
		if err != nil {
			return err
		}
		if list != nil {
			return r.seeds(ctx, env, dir, list, *parallel)
		}
		rep, err := r.run(ctx, *seed, r.bars(env), r.line(env, false))
		if err != nil {
			return err
		}
		if err := rep.Write(dir); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "report: %s/summary.md\n", dir)
		return nil
	}
}

// simRunner runs the chosen policies on one seed's stream and cluster.
type simRunner struct {
	cluster   clusterOpts
	synthetic syntheticOpts
	trace     string
	jobs      int
	policies  []sim.Policy
	started   time.Time
	// base is every run's configuration but its cluster, stream, policy,
	// seed and progress.
	base sim.Config
	// fromFile is a trace file's stream, read once by prepare: unlike a
	// synthetic stream it is the same for every seed (and runs only read
	// it).
	fromFile     []trace.Job
	fromFileName string
}

// prepare checks the cluster and the stream of seed before the report
// folder exists, so that a bad flag leaves nothing behind, and reads a
// trace file's stream once.
func (r *simRunner) prepare(seed uint64) error {
	if _, err := r.cluster.build(""); err != nil {
		return err
	}
	stream, name, err := r.stream(seed)
	if err != nil {
		return err
	}
	if r.trace != "synthetic" {
		r.fromFile, r.fromFileName = stream, name
	}
	return nil
}

// stream is the job stream of seed, and its name for reports.
func (r simRunner) stream(seed uint64) ([]trace.Job, string, error) {
	if r.fromFile != nil {
		return r.fromFile, r.fromFileName, nil
	}
	stream, name, err := loadStream(r.trace, r.synthetic, seed, "sim")
	if err != nil {
		return nil, "", err
	}
	return trace.Head(stream, r.jobs), name, nil
}

// progressFunc is told of a policy's run's progress on seed: done of
// total jobs; finished once it has ended.
type progressFunc func(seed uint64, p sim.Policy, done, total int, finished bool)

// run simulates every policy on seed's stream: progress is told as each
// runs, and each result is passed to done.
func (r simRunner) run(ctx context.Context, seed uint64, progress progressFunc, done func(uint64, sim.Result)) (sim.Report, error) {
	c, err := r.cluster.build("")
	if err != nil {
		return sim.Report{}, err
	}
	stream, name, err := r.stream(seed)
	if err != nil {
		return sim.Report{}, err
	}
	rep := sim.Report{
		Run: ltreport.NewRun("simulate", r.started, seed), Trace: name,
		Stream: trace.Summarize(stream), Cluster: c.Name, Nodes: len(c.Nodes), GPUs: c.GPUs(),
		Leaves: len(c.Leaves), Spines: len(c.Spines), Window: r.base.Window, BackfillInterval: r.base.BackfillInterval.String(),
	}
	cpu0 := cpuTime()
	for _, p := range r.policies {
		if ctx.Err() != nil {
			return sim.Report{}, ctx.Err()
		}
		cfg := r.base
		cfg.Cluster, cfg.Jobs, cfg.Policy, cfg.Seed = c, stream, p, seed
		cfg.Progress = func(n, total int) { progress(seed, p, n, total, false) }
		res, err := sim.Run(cfg)
		progress(seed, p, len(stream), len(stream), true)
		if err != nil {
			return sim.Report{}, errors.Wrapf(err, "%s, seed %d", p, seed)
		}
		d := cfg.WithDefaults()
		rep.Window, rep.BackfillInterval = d.Window, d.BackfillInterval.String()
		rep.LeafPenalty, rep.SpinePenalty, rep.LimitFactor, rep.SwitchWait = d.LeafPenalty, d.SpinePenalty, d.LimitFactor, d.SwitchWait.String()
		if d.TimeLimit > 0 {
			rep.TimeLimit = d.TimeLimit.String()
		}
		done(seed, res)
		rep.Results = append(rep.Results, res)
	}
	rep.CPUSeconds = (cpuTime() - cpu0).Seconds()
	return rep, nil
}

// bars draws a progress bar per policy run, one run at a time.
func (r simRunner) bars(env *cliEnv) progressFunc {
	var bar *ltreport.Progress
	return func(_ uint64, p sim.Policy, done, total int, finished bool) {
		if bar == nil {
			bar = ltreport.NewProgress(env.stderr, fmt.Sprintf("%-8s", p), float64(total))
		}
		bar.Set(float64(done))
		if finished {
			bar.Done()
			bar = nil
		}
	}
}

// line prints a policy's headline figures once its run has ended.
// withSeed puts the seed first (runs of several seeds end in any order).
func (r simRunner) line(env *cliEnv, withSeed bool) func(uint64, sim.Result) {
	return func(seed uint64, res sim.Result) {
		head := fmt.Sprintf("%-8s", res.Policy)
		if withSeed {
			head = fmt.Sprintf("seed %d %s", seed, head)
		}
		fmt.Fprintf(env.stdout, "%s %s: utilization %s, queue delay mean %s (p99 %s), makespan %s, min-leaves %s, partial-gang %s GPU-h\n",
			head, ltreport.Duration(res.Wall), ltreport.Pct(res.Utilization), ltreport.Duration(res.QueueDelay.Mean),
			ltreport.Duration(res.QueueDelay.P99), ltreport.Duration(res.Makespan), ltreport.Pct(res.MinLeavesShare),
			ltreport.Thousands(int(res.PartialGangGPUHours+0.5)))
	}
}

func parsePolicies(s string) ([]sim.Policy, error) {
	if s == "all" || s == "" {
		return sim.Policies, nil
	}
	var out []sim.Policy
	for _, name := range strings.Split(s, ",") {
		p, err := sim.ParsePolicy(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// clusterOpts are the flags that shape a simulated cluster, shared by
// simulate and loadtest.
type clusterOpts struct {
	topo                                 *string
	nodes, gpus, perLeaf, leavesPerSpine *int
}

func clusterFlags(fs *pflag.FlagSet, nodes, perLeaf, leavesPerSpine int) clusterOpts {
	return clusterOpts{
		topo:           fs.String("topology", "generated", "\"generated\" (leaf/spine tree), \"lingjun\" (the Lingjun Clos in ../shared/traces) or a topology file"),
		nodes:          fs.IntP("nodes", "N", nodes, "simulated nodes"),
		gpus:           fs.Int("gpus-per-node", 8, "GPUs per node"),
		perLeaf:        fs.Int("nodes-per-leaf", perLeaf, "generated topology: nodes per leaf switch"),
		leavesPerSpine: fs.Int("leaves-per-spine", leavesPerSpine, "generated topology: leaves per spine"),
	}
}

func (o clusterOpts) build(prefix string) (*fabric.Cluster, error) {
	switch *o.topo {
	case "generated":
		return fabric.Generated{Nodes: *o.nodes, NodesPerLeaf: *o.perLeaf, LeavesPerSpine: *o.leavesPerSpine, GPUs: *o.gpus, Prefix: prefix}.Build()
	case "lingjun":
		path := trace.DefaultLingjun()
		if path == "" {
			return nil, errors.New("--topology lingjun: ../shared/traces/alibaba_lingjun2023_topo.csv.gz not found beside the repository")
		}
		return fabric.LoadLingjun(path, *o.nodes, *o.gpus, prefix)
	default:
		return fabric.LoadLingjun(*o.topo, *o.nodes, *o.gpus, prefix)
	}
}

// syntheticOpts are the flags of a generated job stream.
type syntheticOpts struct {
	rate             *float64
	count            *int
	span             *time.Duration
	sizes, durations *string
	constrained      *float64
	switchWait       *time.Duration
	poisson          *bool
}

func syntheticFlags(fs *pflag.FlagSet) syntheticOpts {
	return syntheticOpts{
		rate:        fs.Float64("rate", 100, "synthetic stream: arrivals per second (open loop)"),
		count:       fs.Int("count", 0, "synthetic stream: number of jobs (0: bounded by --span)"),
		span:        fs.Duration("span", 30*time.Second, "synthetic stream: submit for this long"),
		sizes:       fs.String("sizes", "1x8:50,2x8:30,4x8:15,8x8:5", "synthetic stream: gang sizes NODESxGPUS:weight"),
		durations:   fs.String("durations", "1s:50,2s:30,4s:20", "synthetic stream: run times DURATION:weight"),
		constrained: fs.Float64("constrained", 0, "synthetic stream: share of multi-node jobs asking for one leaf (maxSwitches 1)"),
		switchWait:  fs.Duration("constrained-wait", 10*time.Second, "synthetic stream: how long constrained jobs wait for one leaf"),
		poisson:     fs.Bool("poisson", false, "synthetic stream: exponential inter-arrival times instead of a fixed interval"),
	}
}

// loadStream reads a trace, or generates a synthetic stream when path is
// "synthetic"; it returns the jobs and a name for reports.
func loadStream(path string, o syntheticOpts, seed uint64, prefix string) ([]trace.Job, string, error) {
	if path != "synthetic" {
		if path == "" {
			return nil, "", errors.New("--trace: ../shared/traces/philly2017_microsoft.csv.gz not found beside the repository; give a path or \"synthetic\"")
		}
		jobs, err := trace.Load(path)
		return trace.Rebase(jobs), path, err
	}
	sizes, err := trace.ParseSizes(*o.sizes)
	if err != nil {
		return nil, "", usagef("--sizes: %v", err)
	}
	durs, err := trace.ParseDurations(*o.durations)
	if err != nil {
		return nil, "", usagef("--durations: %v", err)
	}
	s := trace.Synthetic{
		Rate: *o.rate, Count: *o.count, Span: *o.span, Poisson: *o.poisson, Sizes: sizes, Durations: durs,
		ConstrainedShare: *o.constrained, SwitchWait: *o.switchWait, Prefix: prefix, Seed: seed,
	}
	jobs, err := s.Generate()
	if err != nil {
		return nil, "", usagef("synthetic stream: %v", err)
	}
	return jobs, fmt.Sprintf("synthetic (%g jobs/s, sizes %s, durations %s)", *o.rate, *o.sizes, *o.durations), nil
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
