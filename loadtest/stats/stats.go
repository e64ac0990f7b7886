// Package stats summarises samples for the load-test and simulator
// reports: mean and nearest-rank percentiles, and CDF points for plots.
package stats

import (
	"math"
	"slices"
)

// Dist summarises a sample. Values are in the sample's unit (the callers
// use seconds or milliseconds and say which in the field name they store
// it under).
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Summarize computes a Dist. It sorts a copy; xs is not modified.
func Summarize(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Dist{
		N: len(s), Mean: sum / float64(len(s)),
		P50: Percentile(s, 50), P90: Percentile(s, 90), P99: Percentile(s, 99), Max: s[len(s)-1],
	}
}

// Percentile is the nearest-rank percentile of sorted values: the smallest
// value with at least p% of the sample at or below it.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// CDF returns at most points (x, fraction ≤ x) pairs describing the
// empirical distribution of xs, for plotting.
func CDF(xs []float64, points int) (x, y []float64) {
	if len(xs) == 0 {
		return nil, nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	points = max(points, 2)
	step := max(len(s)/points, 1)
	for i := 0; i < len(s); i += step {
		x = append(x, s[i])
		y = append(y, float64(i+1)/float64(len(s)))
	}
	if x[len(x)-1] != s[len(s)-1] || y[len(y)-1] != 1 {
		x = append(x, s[len(s)-1])
		y = append(y, 1)
	}
	return x, y
}
