package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/loadtest/stats"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

// The same makespan and utilisations that differ only in the 14th digit
// (summation order) are a tie: the target is met, not "NOT met".
func TestTargetsToleratesFloatTies(t *testing.T) {
	base := Result{Policy: SlurmLike, Utilization: 0.7981234567890123, QueueDelay: stats.Dist{Mean: 3600}}
	ls := base
	ls.Policy = Lockstep
	ls.Utilization -= 3e-15
	ls.QueueDelay.Mean += 1e-11
	got := Report{Results: []Result{ls, base}}.targets()
	for _, want := range []string{"utilization ≥ every baseline: met", "mean queueing delay ≤ every baseline: met"} {
		if !strings.Contains(got, want) {
			t.Errorf("targets() lacks %q:\n%s", want, got)
		}
	}
	ls.Utilization -= 1e-4 // a real difference still fails
	if got := (Report{Results: []Result{ls, base}}).targets(); !strings.Contains(got, "utilization ≥ every baseline: NOT met") {
		t.Errorf("a real shortfall passed:\n%s", got)
	}
}

func TestRoundIntRounds(t *testing.T) {
	for in, want := range map[float64]int{0.4: 0, 0.5: 1, 12.99: 13, 1234.5: 1235} {
		if got := roundInt(in); got != want {
			t.Errorf("roundInt(%v) = %d, want %d", in, got, want)
		}
	}
}

func TestShareStaysInUnitInterval(t *testing.T) {
	for _, c := range []struct{ num, den, want float64 }{
		{1.0000000000000007 * 64, 64, 1}, {-1e-12, 64, 0}, {32, 64, 0.5}, {1, 0, 0},
	} {
		if got := share(c.num, c.den); got != c.want {
			t.Errorf("share(%v, %v) = %v, want %v", c.num, c.den, got, c.want)
		}
	}
}

// One unit per column: the largest value's. A p50 of 40 s beside a p99 of
// 3 days is "0.0 d" in a column of days, never "40.0 s" in one row and
// "3.0 d" in the next.
func TestColumnsShareOneUnit(t *testing.T) {
	rows := columns([]Result{{Makespan: 40}, {Makespan: 3 * 86400}, {Makespan: 5400}}, func(x Result) []float64 {
		return []float64{x.Makespan, 30}
	})
	want := [][]string{{"0.0 d", "30.0 s"}, {"3.0 d", "30.0 s"}, {"0.1 d", "30.0 s"}}
	for i := range want {
		for k := range want[i] {
			if rows[i][k] != want[i][k] {
				t.Errorf("row %d column %d = %q, want %q", i, k, rows[i][k], want[i][k])
			}
		}
	}
}

// The hand-computed stream of TestHandComputed: 1,840 GPU-seconds on 16
// GPUs is 115 s, more than the latest submission + run time (a: 100 s),
// so no schedule ends before 115 s; Lockstep's 150 s is 1.304 × that.
// Its one multi-node job runs on one leaf; its gang starts (p50) are 0 s
// for 1-node jobs and 90 s for the 2-node one.
func TestLowerBoundAndPackingLine(t *testing.T) {
	jobs := []trace.Job{
		{ID: "a", Submit: 0, Duration: 100 * s, Nodes: 1, GPUsPerNode: 8},
		{ID: "b", Submit: 10 * s, Duration: 50 * s, Nodes: 2, GPUsPerNode: 8},
		{ID: "c", Submit: 20 * s, Duration: 30 * s, Nodes: 1, GPUsPerNode: 8},
	}
	_, r := run(t, Config{Cluster: cluster(t, 2, 2, 1), Jobs: jobs, Policy: Lockstep})
	if !near(r.MakespanLowerBound, 115) {
		t.Errorf("lower bound %g s, want 115", r.MakespanLowerBound)
	}
	want := "- lockstep: 0 of 1 multi-node jobs on extra leaves; makespan 1.304 × its lower bound (115.0 s); gang start p50 by nodes 1: 0.0 s, 2: 90.0 s\n"
	if got := r.packing(); got != want {
		t.Errorf("packing line\n got %q\nwant %q", got, want)
	}
}

// A burst of 100 s is drawn over seconds and a month's trace over days,
// every policy's line in the one unit the longest run takes.
func TestUtilizationAxisTakesTheRunsUnit(t *testing.T) {
	for _, c := range []struct {
		buckets  int
		bucketS  float64
		axis     string
		lastX    float64 // the middle of the last bucket, in the axis's unit
		shortEnd float64 // the short run's last point, same unit
	}{
		{buckets: 100, bucketS: 1, axis: "seconds", lastX: 99.5, shortEnd: 49.5},
		{buckets: 60, bucketS: 3600, axis: "days", lastX: 59.5 / 24, shortEnd: 29.5 / 24},
	} {
		long := Result{Policy: Lockstep, BucketS: c.bucketS, UsefulUtil: make([]float64, c.buckets)}
		short := Result{Policy: SlurmLike, BucketS: c.bucketS, UsefulUtil: make([]float64, c.buckets/2)}
		long.UsefulUtil[c.buckets-1] = 0.5
		lines, axis := utilizationLines([]Result{long, short})
		if axis != c.axis {
			t.Errorf("%d buckets of %g s: axis %q, want %q", c.buckets, c.bucketS, axis, c.axis)
		}
		if len(lines) != 2 {
			t.Fatalf("%d lines, want 2", len(lines))
		}
		l := lines[0]
		if got := l.X[len(l.X)-1]; math.Abs(got-c.lastX) > 1e-9 {
			t.Errorf("%s: last point at %g, want %g", c.axis, got, c.lastX)
		}
		if got := l.Y[len(l.Y)-1]; got != 50 {
			t.Errorf("%s: last point %g %%, want 50 %%", c.axis, got)
		}
		if got := lines[1].X[len(lines[1].X)-1]; math.Abs(got-c.shortEnd) > 1e-9 {
			t.Errorf("%s: the shorter run ends at %g, want %g in the same unit", c.axis, got, c.shortEnd)
		}
	}
}
