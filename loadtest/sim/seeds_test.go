package sim

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/loadtest/stats"
)

// A seeds report gives each figure's mean over the seeds with the
// smallest and largest beside it, each time column in one unit, and
// every seed's figures in a table per policy.
func TestSeedsReportMeansAndRanges(t *testing.T) {
	run := func(seed uint64, util, p50, makespan float64) Report {
		return Report{Run: report.Run{Seed: seed}, Cluster: "c", Nodes: 4, GPUs: 32, Results: []Result{{
			Policy: Lockstep, Utilization: util, QueueDelay: stats.Dist{P50: p50},
			Makespan: makespan, MakespanLowerBound: 100,
		}}}
	}
	r := SeedsReport{Seeds: []uint64{3, 4, 7}, Runs: []Report{
		run(3, 0.50, 3600, 110), run(4, 0.70, 7200, 104), run(7, 0.60, 5400, 108),
	}}
	got := r.Spreads(Lockstep)
	util, p50, ratio := got[0], got[4], got[10]
	if !near(util.Mean, 0.6) || util.Min != 0.5 || util.Max != 0.7 {
		t.Errorf("utilization spread %+v", util)
	}
	if p50 != (Spread{Mean: 5400, Min: 3600, Max: 7200}) {
		t.Errorf("p50 spread %+v", p50)
	}
	if !near(ratio.Mean, (1.10+1.04+1.08)/3) || ratio.Min != 1.04 || ratio.Max != 1.1 {
		t.Errorf("makespan ÷ bound spread %+v", ratio)
	}
	sum := r.Summary()
	for _, want := range []string{
		"# Simulation over 3 seeds", "- seeds: 3, 4, 7",
		"| lockstep | 60.00 % (50.00–70.00) |", "| 1.50 h (1.00–2.00) |", "| 1.073 (1.040–1.100) |",
		"| 7 | 60.00 % |", "| 1.50 h |",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if got := (SeedsReport{}).Spreads(Lockstep); got != nil {
		t.Errorf("no runs: %v", got)
	}
}

// Consecutive seeds read as a range, others one by one.
func TestSeedList(t *testing.T) {
	for _, c := range []struct {
		seeds []uint64
		want  string
	}{
		{[]uint64{1, 2, 3, 4, 5}, "1–5"},
		{[]uint64{1, 2, 3, 9}, "1–3, 9"},
		{[]uint64{1, 2}, "1, 2"},
		{[]uint64{9, 1, 2, 3}, "9, 1–3"},
		{[]uint64{7}, "7"},
	} {
		if got := seedList(c.seeds); got != c.want {
			t.Errorf("seedList(%v) = %q, want %q", c.seeds, got, c.want)
		}
	}
}
