package live

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/stats"
)

// Report is what a `lockstep loadtest` run writes to results.json.
type Report struct {
	report.Run         // Kind "loadtest"
	Stream     string  `json:"stream"`
	Cluster    string  `json:"cluster"`
	Result     *Result `json:"result"`
}

// Write puts summary.md, results.json and the plots in dir.
func (rep Report) Write(dir string) error {
	if err := report.WriteJSON(dir, "results.json", rep); err != nil {
		return err
	}
	r := rep.Result
	var cdf []report.Series
	for _, s := range []struct {
		name string
		xs   []float64
	}{{"submit → admitted", r.AdmittedMs}, {"submit → reserved", r.ReservedMs}, {"submit → all ranks running", r.RunningMs}} {
		x, y := stats.CDF(s.xs, 500)
		cdf = append(cdf, report.Series{Name: s.name, X: x, Y: y})
	}
	if err := report.LinePlot(filepath.Join(dir, "latency-cdf.png"), "Latency (CDF)", "milliseconds (log)", "fraction of jobs", cdf, true); err != nil {
		return err
	}
	tp := report.Series{Name: "jobs reaching running"}
	for sec, n := range r.RunningPerSecond {
		tp.X = append(tp.X, float64(sec))
		tp.Y = append(tp.Y, float64(n))
	}
	if err := report.LinePlot(filepath.Join(dir, "throughput.png"), "Throughput", "seconds since the first submission", "jobs/s", []report.Series{tp}, false); err != nil {
		return err
	}
	return report.WriteText(dir, "summary.md", rep.Summary())
}

// Summary renders summary.md.
func (rep Report) Summary() string {
	r := rep.Result
	var b strings.Builder
	fmt.Fprintf(&b, "# Load test: %d virtual nodes, %s\n\n", r.Nodes, rep.Stream)
	b.WriteString(rep.Markdown())
	fmt.Fprintf(&b, "- cluster: %s (%s GPUs; %d nodes per etcd lease)\n", rep.Cluster, report.Thousands(r.GPUs), r.NodesPerLease)
	fmt.Fprintf(&b, "- services: %s (NATS %s, etcd %s)\n", r.Mode, r.NATS, r.Etcd)
	fmt.Fprintf(&b, "- auth: %s; jobs published on %s\n\n", authLine(r), r.SubmitSubject)

	t := report.Table{Header: []string{"jobs", "offered/s", "submitted", "admitted", "rejected", "running", "succeeded", "failed", "unfinished"}}
	t.Add(report.Thousands(r.Jobs), report.Rate(r.OfferedRate), report.Thousands(r.Submitted), report.Thousands(r.Admitted),
		r.Rejected, report.Thousands(r.Running), report.Thousands(r.Succeeded), r.Failed, r.Unfinished)
	b.WriteString(t.String() + "\n")

	lt := report.Table{Header: []string{"latency from submit", "p50", "p90", "p99", "max", "n"}}
	for _, x := range []struct {
		name string
		d    stats.Dist
	}{{"→ admitted", r.ToAdmitted}, {"→ reserved", r.ToReserved}, {"→ all ranks running", r.ToRunning}} {
		lt.Add(x.name, ms(x.d.P50), ms(x.d.P90), ms(x.d.P99), ms(x.d.Max), report.Thousands(x.d.N))
	}
	b.WriteString(lt.String() + "\n")
	if len(r.Stages) > 0 && r.Stages[0].Ms.N > 0 {
		st := report.Table{Header: []string{"leg of submit → running (jobs not requeued)", "p50", "p90", "p99", "max", "n"}}
		for _, x := range r.Stages {
			st.Add(x.Name, ms(x.Ms.P50), ms(x.Ms.P90), ms(x.Ms.P99), ms(x.Ms.Max), report.Thousands(x.Ms.N))
		}
		b.WriteString(st.String() + "\n")
	}

	tt := report.Table{Header: []string{"throughput", "value"}}
	tt.Add("sustained jobs reaching running /s (submission window, first 10 % excluded)", fmt.Sprintf("%.1f", r.SustainedPerSec))
	tt.Add("sustained reservations /s (same window)", fmt.Sprintf("%.1f", r.ReservedPerSec))
	tt.Add("all running jobs / (first submit → last running)", fmt.Sprintf("%.1f", r.OverallPerSec))
	tt.Add("backlog at the last submission (submitted − running)", report.Thousands(r.Backlog))
	if r.RawPerSec > 0 {
		tt.Add(fmt.Sprintf("raw etcd reservation Txn/s (%s gangs, %d clients; before %s, after %s)", r.RawBefore.Shape, r.RawBefore.Workers,
			rawRate(r.RawBefore), rawRate(r.RawAfter)), fmt.Sprintf("%.0f", r.RawPerSec))
		tt.Add("sustained reservations ÷ raw Txn/s", fmt.Sprintf("%.2f", r.RatioToRaw))
	}
	tt.Add("conflict events / conflicts in job records / jobs with conflicts", fmt.Sprintf("%d / %d / %d", r.Conflicts, r.ConflictsRecorded, r.JobsWithConflicts))
	requeues := fmt.Sprint(r.Requeues)
	if len(r.RequeueReasons) > 0 {
		requeues += fmt.Sprintf(" %v", r.RequeueReasons)
	}
	tt.Add("requeues (jobs by first reason)", requeues)
	b.WriteString(tt.String() + "\n")

	b.WriteString(packingLine(r.Packing))
	b.WriteString(loadLine(r.Packing))
	if r.Usage.Measured {
		fmt.Fprintf(&b, "Process (NATS + etcd + services + this harness) during the load: %.1f CPU s over %.1f s = %.2f cores; "+
			"peak Go heap %.0f MiB, Go runtime memory %.0f MiB, peak RSS %.0f MiB; GOGC=%d.\n\n",
			r.Usage.CPUSeconds, r.Usage.WallSeconds, r.Usage.Cores, r.Usage.PeakHeapMiB, r.Usage.PeakSysMiB, r.Usage.PeakRSSMiB, r.Usage.GCPercent)
	} else {
		b.WriteString("Service CPU and memory: not measured (external cluster).\n\n")
	}
	if p := r.Placement; p != nil {
		fmt.Fprintf(&b, "Placement planned %s times during the load (%.0f a second), %.1f ms of wall time a cycle on average.\n\n",
			report.Thousands(p.Cycles), p.PerSecond(), p.MeanMs())
	}
	if len(r.Streams) > 0 && r.Submitted > 0 {
		st := report.Table{Header: []string{"JetStream stream", "messages during the load", "per submitted job"}}
		for _, name := range countedStreams {
			if n, ok := r.Streams[name]; ok {
				st.Add(name, report.Thousands(int(n)), fmt.Sprintf("%.1f", float64(n)/float64(r.Submitted)))
			}
		}
		b.WriteString(st.String() + "\n")
	}
	b.WriteString(etcdWritesTable(r.EtcdWrites, r.Submitted))
	fmt.Fprintf(&b, "Virtual agents: %d started, %d exited, %d lost reports; %d report publishes failed.\n\n",
		r.Agents.Started, r.Agents.Exited, r.Agents.Lost, r.Agents.PublishFailures)
	if r.BookkeepingOK() {
		fmt.Fprintf(&b, "Bookkeeping: every one of the %s submitted jobs was seen admitted and ended.\n", report.Thousands(r.Submitted))
	} else {
		b.WriteString("Bookkeeping problems:\n\n")
		for _, p := range r.Bookkeeping {
			b.WriteString("- " + p + "\n")
		}
	}
	b.WriteString("\nPlots: `latency-cdf.png`, `throughput.png`.\n")
	return b.String()
}

// packingLine says how the succeeded gangs were placed and when they
// started, as the simulator's report does.
func packingLine(p Packing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Packing: %d of %d multi-node jobs on extra leaves", p.ExtraLeafJobs, p.MultiNodeJobs)
	if p.LowerBoundS > 0 {
		fmt.Fprintf(&b, "; makespan %.1f s = %.3f × its lower bound (%.1f s); GPU utilisation %s",
			p.MakespanS, p.MakespanS/p.LowerBoundS, p.LowerBoundS, report.Pct(p.Utilization))
	}
	// One unit for every size, the one the slowest needs: a probe's
	// 60 ms is not "0.1 s", nor a burst's 50 s "50000 ms".
	sizes := slices.Sorted(maps.Keys(p.StartByNodes))
	slowest := 0.0
	for _, n := range sizes {
		slowest = max(slowest, p.StartByNodes[n].P50/1000)
	}
	var parts []string
	for _, n := range sizes {
		parts = append(parts, fmt.Sprintf("%d: %s", n, report.DurationIn(p.StartByNodes[n].P50/1000, report.UnitFor(slowest))))
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "; gang start p50 by nodes %s", strings.Join(parts, ", "))
	}
	if p.MostHolding > 0 {
		jobs := "jobs"
		if p.MostHolding == 1 {
			jobs = "job"
		}
		fmt.Fprintf(&b, "; at most %d %s held GPUs at once", p.MostHolding, jobs)
	}
	b.WriteString(".\n\n")
	return b.String()
}

// loadLine says how much of the cluster the stream asked for and how long
// a job held its GPUs beyond its run time: together, whether a backlog
// came from the scheduler's cost or from GPUs the stream filled.
func loadLine(p Packing) string {
	var parts []string
	if p.OfferedLoad > 0 {
		parts = append(parts, fmt.Sprintf("the stream asks for %s of the cluster's GPU time over its submissions", report.Pct(p.OfferedLoad)))
	}
	if d := p.HoldOverheadMs; d.N > 0 {
		parts = append(parts, fmt.Sprintf("a job held its GPUs %.0f ms beyond its run time (p50; mean %.0f, p99 %.0f ms), from its reservation to its end",
			d.P50, d.Mean, d.P99))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Load: " + strings.Join(parts, "; ") + ".\n\n"
}

// authLine says how the harness connected.
func authLine(r *Result) string {
	if r.Auth == "" {
		return "none (anonymous, plain text)"
	}
	if r.SubmittedAs == "" {
		return r.Auth
	}
	return r.Auth + "; submitted as " + r.SubmittedAs
}

func ms(x float64) string { return fmt.Sprintf("%.0f ms", x) }

func rawRate(r *RawResult) string {
	if r == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f", r.PerSec)
}
