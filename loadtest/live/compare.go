package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/loadtest/report"
)

// Comparison is one workload run on fresh embedded clusters without auth
// and with it (NATS creds, etcd TLS with client certificates, submissions
// as a user): what auth costs, measured in one command on one machine.
// With several rounds the order alternates (insecure first in odd rounds,
// auth first in even ones), so that neither side always runs on a cold
// process, and ratios are taken per round.
type Comparison struct {
	report.Run           // Kind "loadtest-compare-auth"
	Stream     string    `json:"stream"`
	Cluster    string    `json:"cluster"`
	Insecure   []*Result `json:"insecure"`
	Auth       []*Result `json:"auth"`
}

// metric is one compared figure, read from a run ("" and 0 when the run
// did not measure it).
type metric struct {
	name   string
	format string
	of     func(*Result) float64
}

var compared = []metric{
	{"sustained jobs reaching running /s", "%.1f", func(r *Result) float64 { return r.SustainedPerSec }},
	{"submit → admitted p50 (ms)", "%.1f", func(r *Result) float64 { return r.ToAdmitted.P50 }},
	{"submit → admitted p99 (ms)", "%.1f", func(r *Result) float64 { return r.ToAdmitted.P99 }},
	{"submit → all ranks running p50 (ms)", "%.0f", func(r *Result) float64 { return r.ToRunning.P50 }},
	{"submit → all ranks running p99 (ms)", "%.0f", func(r *Result) float64 { return r.ToRunning.P99 }},
	{"process CPU ms per submitted job", "%.1f", func(r *Result) float64 {
		if !r.Usage.Measured || r.Submitted == 0 {
			return 0
		}
		return 1000 * r.Usage.CPUSeconds / float64(r.Submitted)
	}},
	// How much CPU the process got: on a shared machine, a run that got
	// much less than its pair says the pair's ratios are the neighbours'.
	{"cores the process got (CPU s ÷ wall s)", "%.2f", func(r *Result) float64 { return r.Usage.Cores }},
	{"raw etcd reservation Txn/s", "%.0f", func(r *Result) float64 { return r.RawPerSec }},
}

// Table is the side-by-side figures and their ratios, auth ÷ insecure:
// above 1 a latency or CPU cost grew with auth, below 1 a rate fell. Each
// side's figure is the median over its runs; the ratio is the median of
// the rounds' ratios (each round's two runs are adjacent in time, so they
// share the machine's conditions), with every round's ratio beside it.
func (c Comparison) Table() report.Table {
	t := report.Table{Header: []string{"", "insecure", "auth + TLS", "auth ÷ insecure"}}
	if len(c.Insecure) > 1 {
		t.Header = append(t.Header, "per round")
	}
	for _, m := range compared {
		var ins, au, ratios []float64
		for k := range min(len(c.Insecure), len(c.Auth)) {
			a, b := m.of(c.Insecure[k]), m.of(c.Auth[k])
			ins, au = append(ins, a), append(au, b)
			if a > 0 {
				ratios = append(ratios, b/a)
			}
		}
		if median(ins) == 0 && median(au) == 0 {
			continue
		}
		ratio := "—"
		if len(ratios) > 0 {
			ratio = fmt.Sprintf("%.2f", median(ratios))
		}
		row := []any{m.name, fmt.Sprintf(m.format, median(ins)), fmt.Sprintf(m.format, median(au)), ratio}
		if len(c.Insecure) > 1 {
			each := make([]string, len(ratios))
			for k, r := range ratios {
				each[k] = fmt.Sprintf("%.2f", r)
			}
			row = append(row, strings.Join(each, ", "))
		}
		t.Add(row...)
	}
	return t
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Summary renders compare.md.
func (c Comparison) Summary() string {
	var b strings.Builder
	var submitted, succeeded [2]int
	for k, rs := range [][]*Result{c.Insecure, c.Auth} {
		for _, r := range rs {
			submitted[k] += r.Submitted
			succeeded[k] += r.Succeeded
		}
	}
	fmt.Fprintf(&b, "# Load test, insecure vs auth + TLS: %d virtual nodes, %s\n\n", c.Insecure[0].Nodes, c.Stream)
	b.WriteString(c.Markdown())
	fmt.Fprintf(&b, "- cluster: %s\n", c.Cluster)
	fmt.Fprintf(&b, "- insecure: %s; jobs published on %s\n", authLine(c.Insecure[0]), c.Insecure[0].SubmitSubject)
	fmt.Fprintf(&b, "- auth: %s; jobs published on %s\n\n", authLine(c.Auth[0]), c.Auth[0].SubmitSubject)
	b.WriteString(c.Table().String() + "\n")
	fmt.Fprintf(&b, "%d round(s), each side on a fresh embedded cluster per round, one after the other in this process "+
		"(insecure first in odd rounds, auth first in even ones). Each side's figure is the median of its runs' and the ratio "+
		"the median of the rounds' ratios. Jobs (insecure / auth): %d / %d submitted, %d / %d succeeded. "+
		"Each run's own report is in `<side>-<round>/`.\n",
		len(c.Insecure), submitted[0], submitted[1], succeeded[0], succeeded[1])
	return b.String()
}

// Write puts compare.md and compare.json in dir; each run's own report
// goes in dir/<side>-<round> (written by the caller).
func (c Comparison) Write(dir string) error {
	if err := report.WriteJSON(dir, "compare.json", c); err != nil {
		return err
	}
	return report.WriteText(dir, "compare.md", c.Summary())
}
