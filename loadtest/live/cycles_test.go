package live

import (
	"testing"

	"github.com/cockroachdb/errors"
)

func TestCycleTotalsReadTheHistogram(t *testing.T) {
	exposition := `# HELP lockstep_placement_cycle_duration_seconds Wall time of each scheduling cycle.
# TYPE lockstep_placement_cycle_duration_seconds histogram
lockstep_placement_cycle_duration_seconds_bucket{le="0.001"} 3
lockstep_placement_cycle_duration_seconds_bucket{le="+Inf"} 40
lockstep_placement_cycle_duration_seconds_sum 0.52
lockstep_placement_cycle_duration_seconds_count 40
lockstep_placement_cycle_duration_seconds_sum{instance="b"} 0.25
lockstep_placement_cycle_duration_seconds_count{instance="b"} 10
lockstep_gang_wait_seconds_count{queue="default"} 7
`
	count, sum, err := cycleTotals(exposition)
	if err != nil || count != 50 || sum != 0.77 {
		t.Fatalf("cycleTotals = %v, %v, %v; want 50, 0.77 (both replicas' series, buckets left out)", count, sum, err)
	}
	if _, _, err := cycleTotals("lockstep_gang_wait_seconds_count 7\n"); !errors.Is(err, errNoCycles) {
		t.Errorf("metrics without the histogram: err %v", err)
	}
	if _, _, err := cycleTotals("lockstep_placement_cycle_duration_seconds_count x\n"); err == nil {
		t.Error("a value that is not a number was read")
	}
	if got := (PlacementCycles{Cycles: 50, Seconds: 0.77}).MeanMs(); got != 15.4 {
		t.Errorf("MeanMs = %v, want 15.4", got)
	}
}
