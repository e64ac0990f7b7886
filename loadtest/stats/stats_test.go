package stats

import "testing"

func TestSummarize(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	d := Summarize(xs)
	want := Dist{N: 10, Mean: 5.5, P50: 5, P90: 9, P99: 10, Max: 10}
	if d != want {
		t.Errorf("Summarize = %+v, want %+v", d, want)
	}
	if xs[0] != 5 {
		t.Error("Summarize modified its input")
	}
	if (Summarize(nil) != Dist{}) {
		t.Error("empty sample: non-zero Dist")
	}
}

func TestCDF(t *testing.T) {
	x, y := CDF([]float64{3, 1, 2}, 10)
	if len(x) != 3 || x[0] != 1 || x[2] != 3 || y[2] != 1 {
		t.Errorf("CDF = %v, %v", x, y)
	}
}
