package sim

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/loadtest/stats"
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
