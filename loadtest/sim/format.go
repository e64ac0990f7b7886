package sim

import (
	"math"

	"github.com/lockstep-dev/lockstep/loadtest/report"
)

// tolerance is the relative difference below which two figures of a
// report are equal: sums of the same terms in another order differ in
// the 14th digit, and a target must not fail on that.
const tolerance = 1e-9

// atLeast reports whether a ≥ b up to tolerance.
func atLeast(a, b float64) bool {
	return a >= b-tolerance*max(math.Abs(a), math.Abs(b), 1)
}

// roundInt rounds to the nearest integer (a figure shown as a whole
// number is rounded, not truncated).
func roundInt(x float64) int { return int(math.Round(x)) }

// share is a ratio of GPU time known to lie in [0, 1]: float summation
// can put it a few ulps outside, which a report must not show.
func share(num, den float64) float64 {
	if den <= 0 {
		return 0
	}
	return min(max(num/den, 0), 1)
}

// columns renders times (seconds) per result, each column in the unit of
// its largest value: rows[i][k] is result i's k-th figure.
func columns(results []Result, figures func(Result) []float64) [][]string {
	vals := make([][]float64, len(results))
	var widest []float64
	for i, x := range results {
		vals[i] = figures(x)
		for k, v := range vals[i] {
			if k == len(widest) {
				widest = append(widest, v)
			}
			widest[k] = max(widest[k], v)
		}
	}
	out := make([][]string, len(results))
	for i, row := range vals {
		for k, v := range row {
			out[i] = append(out[i], report.DurationIn(v, report.UnitFor(widest[k])))
		}
	}
	return out
}
