package live

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/stats"
)

// Comparison is one workload run on fresh embedded clusters without auth
// and with it (NATS creds, etcd TLS with client certificates, submissions
// as a user): what auth costs, measured in one command on one machine.
// With several rounds the order alternates (insecure first in odd rounds,
// auth first in even ones), so that neither side always runs on a cold
// process, and each side's samples are pooled.
type Comparison struct {
	Kind     string    `json:"kind"` // "loadtest-compare-auth"
	Command  string    `json:"command"`
	Started  time.Time `json:"started"`
	Seed     uint64    `json:"seed"`
	Stream   string    `json:"stream"`
	Cluster  string    `json:"cluster"`
	Insecure []*Result `json:"insecure"`
	Auth     []*Result `json:"auth"`
}

// side is one side's runs pooled.
type side struct {
	sustained           float64 // mean over the runs
	admitted, running   stats.Dist
	cpuPerJobMs, rawTxn float64
	submitted, ok       int
}

func pool(rs []*Result) side {
	var s side
	var adm, run []float64
	var cpu float64
	measured := true
	for _, r := range rs {
		s.sustained += r.SustainedPerSec / float64(len(rs))
		s.rawTxn += r.RawPerSec / float64(len(rs))
		adm, run = append(adm, r.AdmittedMs...), append(run, r.RunningMs...)
		cpu += r.Usage.CPUSeconds
		measured = measured && r.Usage.Measured
		s.submitted += r.Submitted
		s.ok += r.Succeeded
	}
	s.admitted, s.running = stats.Summarize(adm), stats.Summarize(run)
	if measured && s.submitted > 0 {
		s.cpuPerJobMs = 1000 * cpu / float64(s.submitted)
	}
	return s
}

// Table is the side-by-side figures and their ratios, auth ÷ insecure:
// above 1 a latency or CPU cost grew with auth, below 1 a rate fell.
func (c Comparison) Table() report.Table {
	t := report.Table{Header: []string{"", "insecure", "auth + TLS", "auth ÷ insecure"}}
	row := func(name string, a, b float64, format string) {
		if a == 0 && b == 0 {
			return
		}
		ratio := "—"
		if a > 0 {
			ratio = fmt.Sprintf("%.2f", b/a)
		}
		t.Add(name, fmt.Sprintf(format, a), fmt.Sprintf(format, b), ratio)
	}
	i, a := pool(c.Insecure), pool(c.Auth)
	row("sustained jobs reaching running /s", i.sustained, a.sustained, "%.1f")
	row("submit → admitted p50 (ms)", i.admitted.P50, a.admitted.P50, "%.1f")
	row("submit → admitted p99 (ms)", i.admitted.P99, a.admitted.P99, "%.1f")
	row("submit → all ranks running p50 (ms)", i.running.P50, a.running.P50, "%.0f")
	row("submit → all ranks running p99 (ms)", i.running.P99, a.running.P99, "%.0f")
	row("process CPU ms per submitted job", i.cpuPerJobMs, a.cpuPerJobMs, "%.1f")
	row("raw etcd reservation Txn/s", i.rawTxn, a.rawTxn, "%.0f")
	return t
}

// Summary renders compare.md.
func (c Comparison) Summary() string {
	var b strings.Builder
	i, a := pool(c.Insecure), pool(c.Auth)
	fmt.Fprintf(&b, "# Load test, insecure vs auth + TLS: %d virtual nodes, %s\n\n", c.Insecure[0].Nodes, c.Stream)
	fmt.Fprintf(&b, "- command: `%s`\n- seed: %d\n- started: %s\n- cluster: %s\n", c.Command, c.Seed, c.Started.Format(time.RFC3339), c.Cluster)
	fmt.Fprintf(&b, "- insecure: %s; jobs published on %s\n", authLine(c.Insecure[0]), c.Insecure[0].SubmitSubject)
	fmt.Fprintf(&b, "- auth: %s; jobs published on %s\n\n", authLine(c.Auth[0]), c.Auth[0].SubmitSubject)
	b.WriteString(c.Table().String() + "\n")
	fmt.Fprintf(&b, "%d round(s), each side on a fresh embedded cluster per round, one after the other in this process "+
		"(insecure first in odd rounds, auth first in even ones); latency percentiles pool each side's jobs, rates are means. "+
		"Jobs: %d / %d submitted, %d / %d succeeded. Each run's own report is in `<side>-<round>/`.\n",
		len(c.Insecure), i.submitted, a.submitted, i.ok, a.ok)
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
