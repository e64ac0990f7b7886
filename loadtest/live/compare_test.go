package live

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/loadtest/stats"
)

// Each side shows the median of its runs; the ratio is the median of the
// rounds' own ratios, each round's listed beside it.
func TestComparisonTable(t *testing.T) {
	run := func(perSec, p99 float64) *Result {
		return &Result{Nodes: 4, SustainedPerSec: perSec, ToRunning: stats.Dist{P50: p99 / 2, P99: p99}}
	}
	c := Comparison{
		Insecure: []*Result{run(40, 100), run(20, 1000), run(40, 200)},
		Auth:     []*Result{run(40, 120), run(40, 100), run(38, 260)},
	}
	got := c.Table().String()
	for _, want := range []string{
		"| sustained jobs reaching running /s | 40.0 | 40.0 | 1.00 | 1.00, 2.00, 0.95 |",
		"| submit → all ranks running p99 (ms) | 200 | 120 | 1.20 | 1.20, 0.10, 1.30 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "admitted") || strings.Contains(got, "raw etcd") {
		t.Errorf("figures no run measured are listed:\n%s", got)
	}
}
