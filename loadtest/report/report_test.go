package report

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPlotsAndTables(t *testing.T) {
	dir := t.TempDir()
	if err := LinePlot(filepath.Join(dir, "cdf.png"), "t", "x", "y",
		[]Series{{Name: "a", X: []float64{0, 1, 10}, Y: []float64{0, 0.5, 1}}}, true); err != nil {
		t.Fatal(err)
	}
	if err := BarPlot(filepath.Join(dir, "bars.png"), "t", "x", "y", []string{"1", "2"},
		[]BarGroup{{Name: "a", Values: []float64{1, 2}}, {Name: "b", Values: []float64{3, 1}}}); err != nil {
		t.Fatal(err)
	}
	// No job waited: every delay 0, nothing to put on a log axis.
	if err := LinePlot(filepath.Join(dir, "zero.png"), "t", "x", "y",
		[]Series{{Name: "a", X: []float64{0, 0}, Y: []float64{0.5, 1}}}, true); err != nil {
		t.Fatalf("a log-X plot of zeros: %v", err)
	}
	for _, f := range []string{"cdf.png", "bars.png", "zero.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	tb := Table{Header: []string{"a", "b"}}
	tb.Add("x", 1)
	if got, want := tb.String(), "| a | b |\n|---|---:|\n| x | 1 |\n"; got != want {
		t.Errorf("table %q, want %q", got, want)
	}
	if Thousands(111539) != "111,539" || Duration(0.25) != "250 ms" || Duration(90000) != "25.0 h" {
		t.Error("number formatting")
	}
}

// A rate keeps the digits its size needs: a probe's one job every 2 s
// is 0.50/s, not 0/s.
func TestRateKeepsItsDigits(t *testing.T) {
	for x, want := range map[float64]string{600: "600", 799.6: "800", 10: "10", 1.343: "1.3", 1: "1.0", 0.5: "0.50", 0.013: "0.01"} {
		if got := Rate(x); got != want {
			t.Errorf("Rate(%g) = %q, want %q", x, got, want)
		}
	}
}
