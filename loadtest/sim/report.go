package sim

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/stats"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

// Report is what a `lockstep simulate` run writes to results.json.
type Report struct {
	report.Run             // Kind "simulate"
	Trace      string      `json:"trace"`
	Stream     trace.Stats `json:"stream"`
	Cluster    string      `json:"cluster"`
	Nodes      int         `json:"nodes"`
	GPUs       int         `json:"gpus"`
	Leaves     int         `json:"leaves"`
	Spines     int         `json:"spines"`
	// The model's knobs, as used.
	LeafPenalty      float64 `json:"leafPenalty"`
	SpinePenalty     float64 `json:"spinePenalty"`
	LimitFactor      float64 `json:"limitFactor"`
	TimeLimit        string  `json:"timeLimit,omitempty"`
	Window           int     `json:"window"`
	SwitchWait       string  `json:"switchWait"`
	BackfillInterval string  `json:"backfillInterval"`
	// CPUSeconds is the whole run's process CPU time; 0 where other runs
	// shared the process (`simulate --seeds`).
	CPUSeconds float64  `json:"cpuS"`
	Results    []Result `json:"results"`
}

// Write puts summary.md, results.json and the plots in dir.
func (r Report) Write(dir string) error {
	if err := report.WriteJSON(dir, "results.json", r); err != nil {
		return err
	}
	if err := r.plots(dir); err != nil {
		return err
	}
	return report.WriteText(dir, "summary.md", r.Summary())
}

// traceTitle names the stream in the summary's title: a trace file by its
// base name, a synthetic stream by its description, which holds rates such
// as "100000 jobs/s" that are not a path.
func (r Report) traceTitle() string {
	if strings.HasPrefix(r.Trace, "synthetic") {
		return r.Trace
	}
	return filepath.Base(r.Trace)
}

// model is the summary's line on the model's knobs.
func (r Report) model() string {
	limits := fmt.Sprintf("duration × %g", r.LimitFactor)
	if r.TimeLimit != "" {
		limits = r.TimeLimit + " for every job"
	}
	return fmt.Sprintf("- model: run time ×(1 + %.2f per extra leaf + %.2f per extra spine); time limits = %s; window %d jobs per shape; Lockstep switch wait %s; Slurm bf_interval %s\n",
		r.LeafPenalty, r.SpinePenalty, limits, r.Window, r.SwitchWait, r.BackfillInterval)
}

// Summary renders summary.md.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Simulation: %s on %s\n\n", r.traceTitle(), r.Cluster)
	b.WriteString(r.Markdown())
	fmt.Fprintf(&b, "- stream: %s jobs over %s, %s GPU-hours, %s multi-node\n", report.Thousands(r.Stream.Jobs),
		report.Duration(r.Stream.Span.Seconds()), report.Thousands(roundInt(r.Stream.GPUHours)), report.Thousands(r.Stream.MultiNodeJobs))
	fmt.Fprintf(&b, "- cluster: %d nodes, %s GPUs, %d leaves, %d spines\n", r.Nodes, report.Thousands(r.GPUs), r.Leaves, r.Spines)
	b.WriteString(r.model() + "\n")

	t := report.Table{Header: []string{"policy", "sim time (wall / CPU)", "utilization", "busy", "util. (arrival span)",
		"queue delay mean", "p50", "p99", "multi-node mean", "GPU-weighted mean", "JCT mean", "makespan",
		"min-leaves share", "partial-gang GPU-h", "stretch GPU-h", "η"}}
	// Each time column in one unit, so rows compare at a glance.
	times := columns(r.Results, func(x Result) []float64 {
		return []float64{x.QueueDelay.Mean, x.QueueDelay.P50, x.QueueDelay.P99, x.MultiNodeQueueDelay,
			x.GPUWeightedQueueDelay, x.JCT.Mean, x.Makespan}
	})
	for i, x := range r.Results {
		row := []any{x.Policy, report.Duration(x.Wall) + " / " + cpuOrDash(x.CPU), report.Pct(x.Utilization),
			report.Pct(x.BusyUtilization), report.Pct(x.ArrivalSpanUtilization)}
		for _, c := range times[i] {
			row = append(row, c)
		}
		row = append(row, report.Pct(x.MinLeavesShare), report.Thousands(roundInt(x.PartialGangGPUHours)),
			report.Thousands(roundInt(x.StretchGPUHours)), fmt.Sprintf("%.3f", x.Eta))
		t.Add(row...)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, x := range r.Results {
		b.WriteString(x.packing())
	}
	b.WriteString("\nPolicies:\n\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "- **%s**: %s\n", x.Policy, x.Description)
	}
	if c := r.targets(); c != "" {
		b.WriteString("\n" + c)
	}
	b.WriteString("\nPlots: `utilization.png` (useful GPU share over time), `queue-delay-cdf.png`, `leaves-per-job.png`.\n")
	if r.CPUSeconds > 0 {
		fmt.Fprintf(&b, "\nProcess CPU time for the whole run: %s.\n", report.Duration(r.CPUSeconds))
	} else {
		b.WriteString("\nProcess CPU time: not measured (the run shared the process with others).\n")
	}
	return b.String()
}

// cpuOrDash renders a run's CPU time, or "—" where it was not measured
// (0: runs that shared the process, as `simulate --seeds` runs them).
func cpuOrDash(sec float64) string {
	if sec <= 0 {
		return "—"
	}
	return report.Duration(sec)
}

// targets checks the simulator targets when Lockstep and the
// baselines were all run.
func (r Report) targets() string {
	var ls *Result
	for i := range r.Results {
		if r.Results[i].Policy == Lockstep {
			ls = &r.Results[i]
		}
	}
	if ls == nil || len(r.Results) < 2 {
		return ""
	}
	yes := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var b strings.Builder
	b.WriteString("Targets (Lockstep vs every baseline):\n\n")
	util, delay := true, true
	for _, x := range r.Results {
		if x.Policy == Lockstep {
			continue
		}
		util = util && atLeast(ls.Utilization, x.Utilization)
		delay = delay && atLeast(x.QueueDelay.Mean, ls.QueueDelay.Mean)
	}
	fmt.Fprintf(&b, "- utilization ≥ every baseline: %s\n", yes(util))
	fmt.Fprintf(&b, "- mean queueing delay ≤ every baseline: %s\n", yes(delay))
	fmt.Fprintf(&b, "- zero GPU-hours idled by partial gangs: %s\n", yes(ls.PartialGangGPUHours == 0))
	for _, x := range r.Results {
		if x.Wall > 120 {
			fmt.Fprintf(&b, "- %s took %s wall, %s CPU (target: under 2 minutes per policy)\n", x.Policy, report.Duration(x.Wall), report.Duration(x.CPU))
		}
	}
	return b.String()
}

func (r Report) plots(dir string) error {
	var cdf []report.Series
	var groups []report.BarGroup
	maxLeaves := 1
	for _, x := range r.Results {
		maxLeaves = max(maxLeaves, len(x.LeavesHistogram)-1)
	}
	var cats []string
	for k := 1; k <= maxLeaves; k++ {
		cats = append(cats, strconv.Itoa(k))
	}
	util, axis := utilizationLines(r.Results)
	for _, x := range r.Results {
		cx, cy := stats.CDF(x.QueueDelays, 500)
		cdf = append(cdf, report.Series{Name: string(x.Policy), X: cx, Y: cy})
		g := report.BarGroup{Name: string(x.Policy), Values: make([]float64, maxLeaves)}
		for k := 1; k < len(x.LeavesHistogram); k++ {
			if x.MultiNodeJobs > 0 {
				g.Values[k-1] = 100 * float64(x.LeavesHistogram[k]) / float64(x.MultiNodeJobs)
			}
		}
		groups = append(groups, g)
	}
	if err := report.LinePlot(filepath.Join(dir, "utilization.png"), "GPUs doing useful work", axis, "% of GPUs", util, false); err != nil {
		return err
	}
	if err := report.LinePlot(filepath.Join(dir, "queue-delay-cdf.png"), "Queueing delay (CDF; 0 s drawn at the smallest delay)",
		"seconds (log)", "fraction of jobs", cdf, true); err != nil {
		return err
	}
	return report.BarPlot(filepath.Join(dir, "leaves-per-job.png"), "Leaf switches per multi-node job", "leaves",
		"% of multi-node jobs", cats, groups)
}

// packing is a result's line on placement and gang starts: multi-node
// jobs on more leaves than they need, makespan ÷ its lower bound, and the
// median gang start per gang size.
func (x Result) packing() string {
	var b strings.Builder
	fmt.Fprintf(&b, "- %s: %d of %d multi-node jobs on extra leaves", x.Policy, x.MultiNodeJobs-x.MinLeaves, x.MultiNodeJobs)
	if x.MakespanLowerBound > 0 {
		fmt.Fprintf(&b, "; makespan %.3f × its lower bound (%s)", x.Makespan/x.MakespanLowerBound, report.Duration(x.MakespanLowerBound))
	}
	sizes := slices.Sorted(maps.Keys(x.DelayByNodes))
	var parts []string
	widest := 0.0
	for _, n := range sizes {
		widest = max(widest, x.DelayByNodes[n].P50)
	}
	for _, n := range sizes {
		parts = append(parts, fmt.Sprintf("%d: %s", n, report.DurationIn(x.DelayByNodes[n].P50, report.UnitFor(widest))))
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "; gang start p50 by nodes %s", strings.Join(parts, ", "))
	}
	b.WriteString("\n")
	return b.String()
}

// utilizationLines are the policies' useful-utilisation lines in
// percent, over a time axis in one unit for every line: the unit the
// report's tables use for the longest run, so a 100 s burst is drawn in
// seconds, not in ten-thousandths of a day. axis is its label.
func utilizationLines(results []Result) (lines []report.Series, axis string) {
	longest := 0.0
	for _, x := range results {
		longest = max(longest, float64(len(x.UsefulUtil))*x.BucketS)
	}
	unit := report.UnitFor(longest)
	for _, x := range results {
		s := report.Series{Name: string(x.Policy)}
		for b, u := range x.UsefulUtil {
			s.X = append(s.X, (float64(b)+0.5)*x.BucketS/unit.Seconds)
			s.Y = append(s.Y, 100*u)
		}
		lines = append(lines, s)
	}
	return lines, unit.Long
}
