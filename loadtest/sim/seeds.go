package sim

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/report"
)

// Why several seeds: a replay of a cluster overloaded for months is
// chaotic. The seed only breaks placement ties, yet on the Philly trace
// at 1,024 GPUs one build's median queueing delay ranged 32.5–42.2 h over
// seeds 1–5, wider than most policy changes move it (docs/benchmarks.md).
// A before/after on one seed can show noise as a gain or a loss; the mean
// and range over a few seeds shows which it is.

// SeedsReport is what `lockstep simulate --seeds` writes to results.json:
// one Report per seed, each also written whole to its own folder (SeedDir).
type SeedsReport struct {
	report.Run          // Kind "simulate-seeds"; Seed is the first seed
	Seeds      []uint64 `json:"seeds"`
	Runs       []Report `json:"runs"`
}

// SeedDir is the folder, under a seeds report's, of one seed's report.
func SeedDir(dir string, seed uint64) string {
	return filepath.Join(dir, "seed-"+strconv.FormatUint(seed, 10))
}

// Write puts summary.md and results.json in dir (each seed's report is
// the caller's to write, to SeedDir).
func (r SeedsReport) Write(dir string) error {
	if err := report.WriteJSON(dir, "results.json", r); err != nil {
		return err
	}
	return report.WriteText(dir, "summary.md", r.Summary())
}

// figure is one column of the seeds tables: a Result's figure and how it
// reads.
type figure struct {
	name string
	kind figureKind
	of   func(Result) float64
}

type figureKind uint8

const (
	shareFigure   figureKind = iota // a share of GPU time, shown in %
	secondsFigure                   // a time, one unit per column
	ratioFigure                     // a plain number, 3 decimals
	gpuHourFigure                   // GPU-hours, whole
)

// seedFigures are the columns of a single run's table (Report.Summary)
// that are not the simulator's own cost, and makespan ÷ its lower bound.
var seedFigures = []figure{
	{"utilization", shareFigure, func(x Result) float64 { return x.Utilization }},
	{"busy", shareFigure, func(x Result) float64 { return x.BusyUtilization }},
	{"util. (arrival span)", shareFigure, func(x Result) float64 { return x.ArrivalSpanUtilization }},
	{"queue delay mean", secondsFigure, func(x Result) float64 { return x.QueueDelay.Mean }},
	{"p50", secondsFigure, func(x Result) float64 { return x.QueueDelay.P50 }},
	{"p99", secondsFigure, func(x Result) float64 { return x.QueueDelay.P99 }},
	{"multi-node mean", secondsFigure, func(x Result) float64 { return x.MultiNodeQueueDelay }},
	{"GPU-weighted mean", secondsFigure, func(x Result) float64 { return x.GPUWeightedQueueDelay }},
	{"JCT mean", secondsFigure, func(x Result) float64 { return x.JCT.Mean }},
	{"makespan", secondsFigure, func(x Result) float64 { return x.Makespan }},
	{"makespan ÷ bound", ratioFigure, func(x Result) float64 {
		if x.MakespanLowerBound <= 0 {
			return 0
		}
		return x.Makespan / x.MakespanLowerBound
	}},
	{"min-leaves share", shareFigure, func(x Result) float64 { return x.MinLeavesShare }},
	{"stretch GPU-h", gpuHourFigure, func(x Result) float64 { return x.StretchGPUHours }},
	{"η", ratioFigure, func(x Result) float64 { return x.Eta }},
}

// Spread is a figure's mean over the seeds and its range.
type Spread struct {
	Mean, Min, Max float64
}

// spreadOf summarizes values (at least one).
func spreadOf(values []float64) Spread {
	s := Spread{Min: values[0], Max: values[0]}
	sum := 0.0
	for _, v := range values {
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean = sum / float64(len(values))
	return s
}

// policies are the policies of the runs, in the first run's order.
func (r SeedsReport) policies() []Policy {
	if len(r.Runs) == 0 {
		return nil
	}
	var out []Policy
	for _, x := range r.Runs[0].Results {
		out = append(out, x.Policy)
	}
	return out
}

// seeded is one seed's result of a policy.
type seeded struct {
	seed uint64
	Result
}

// perSeed is p's result in each run that has one.
func (r SeedsReport) perSeed(p Policy) []seeded {
	var out []seeded
	for _, run := range r.Runs {
		for _, x := range run.Results {
			if x.Policy == p {
				out = append(out, seeded{run.Seed, x})
			}
		}
	}
	return out
}

// Spreads is each figure of seedFigures for policy p, over the seeds: the
// mean, the smallest and the largest.
func (r SeedsReport) Spreads(p Policy) []Spread {
	results := r.perSeed(p)
	if len(results) == 0 {
		return nil
	}
	out := make([]Spread, len(seedFigures))
	for k, f := range seedFigures {
		values := make([]float64, len(results))
		for i, x := range results {
			values[i] = f.of(x.Result)
		}
		out[k] = spreadOf(values)
	}
	return out
}

// Summary renders summary.md: the means and ranges over the seeds per
// policy, then each policy's figures seed by seed.
func (r SeedsReport) Summary() string {
	var b strings.Builder
	if len(r.Runs) == 0 {
		return "# Simulation over no seeds\n"
	}
	first := r.Runs[0]
	fmt.Fprintf(&b, "# Simulation over %d seeds: %s on %s\n\n", len(r.Seeds), first.traceTitle(), first.Cluster)
	fmt.Fprintf(&b, "- command: `%s`\n- seeds: %s (each seed's whole report: `seed-N/summary.md`)\n- started: %s\n",
		r.Command, seedList(r.Seeds), r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "- cluster: %d nodes, %s GPUs, %d leaves, %d spines\n", first.Nodes, report.Thousands(first.GPUs), first.Leaves, first.Spines)
	fmt.Fprintf(&b, "- stream (seed %d): %s jobs, %s multi-node\n", first.Seed, report.Thousands(first.Stream.Jobs), report.Thousands(first.Stream.MultiNodeJobs))
	b.WriteString(first.model() + "\n")

	units := r.units()
	b.WriteString("Mean over the seeds (smallest–largest):\n\n")
	t := report.Table{Header: append([]string{"policy"}, figureNames()...)}
	for _, p := range r.policies() {
		row := []any{p}
		for k, s := range r.Spreads(p) {
			f := seedFigures[k]
			row = append(row, fmt.Sprintf("%s (%s–%s)", f.format(s.Mean, units[k]), f.bare(s.Min, units[k]), f.bare(s.Max, units[k])))
		}
		t.Add(row...)
	}
	b.WriteString(t.String())
	for _, p := range r.policies() {
		fmt.Fprintf(&b, "\n%s, seed by seed:\n\n", p)
		t := report.Table{Header: append([]string{"seed"}, figureNames()...)}
		for _, x := range r.perSeed(p) {
			row := []any{x.seed}
			for k, f := range seedFigures {
				row = append(row, f.format(f.of(x.Result), units[k]))
			}
			t.Add(row...)
		}
		b.WriteString(t.String())
	}
	return b.String()
}

// units is the time unit of each figure's column: that of its largest
// value in any run, so every cell of a column reads in one unit, with one
// more decimal.
func (r SeedsReport) units() []report.TimeUnit {
	widest := make([]float64, len(seedFigures))
	for _, run := range r.Runs {
		for _, x := range run.Results {
			for k, f := range seedFigures {
				widest[k] = max(widest[k], f.of(x))
			}
		}
	}
	units := make([]report.TimeUnit, len(seedFigures))
	for k, w := range widest {
		units[k] = report.UnitFor(w)
		// A digit more than a single run's table: means over seeds
		// differ by less than a run's last digit (5.65 against 5.51 d).
		units[k].Prec++
	}
	return units
}

func figureNames() []string {
	names := make([]string, len(seedFigures))
	for k, f := range seedFigures {
		names[k] = f.name
	}
	return names
}

// format renders v with its unit; bare without it (for a range).
func (f figure) format(v float64, u report.TimeUnit) string {
	switch f.kind {
	case shareFigure:
		return f.bare(v, u) + " %"
	case secondsFigure:
		return report.DurationIn(v, u)
	}
	return f.bare(v, u)
}

func (f figure) bare(v float64, u report.TimeUnit) string {
	switch f.kind {
	case shareFigure:
		// Two decimals: means over seeds differ by tenths of a point.
		return fmt.Sprintf("%.2f", 100*v)
	case secondsFigure:
		return strconv.FormatFloat(v/u.Seconds, 'f', u.Prec, 64)
	case gpuHourFigure:
		return report.Thousands(roundInt(v))
	}
	return fmt.Sprintf("%.3f", v)
}

// seedList renders seeds as given, runs of consecutive seeds as ranges:
// 1–5, 9.
func seedList(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, fmt.Sprintf("%d–%d", seeds[i], seeds[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.FormatUint(seeds[k], 10))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
