package prometheus_test

import (
	"context"
	"math"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// Two drain replicas report the same cluster gauges and the placement
// leader the queue: leaf-1 has 8 of 16 GPUs allocated, leaf-2 16 of 16.
const clusterSeries = `
lockstep_gpus_total{leaf="leaf-1",instance="drain-1"} 16 16 16
lockstep_gpus_total{leaf="leaf-1",instance="drain-2"} 16 16 16
lockstep_gpus_total{leaf="leaf-2",instance="drain-1"} 16 16 16
lockstep_gpus_total{leaf="leaf-2",instance="drain-2"} 16 16 16
lockstep_gpus_allocated{leaf="leaf-1",instance="drain-1"} 0 8 8
lockstep_gpus_allocated{leaf="leaf-1",instance="drain-2"} 0 8 8
lockstep_gpus_allocated{leaf="leaf-2",instance="drain-1"} 16 16 16
lockstep_gpus_allocated{leaf="leaf-2",instance="drain-2"} 16 16 16
lockstep_cluster_efficiency_ratio{instance="drain-1"} 0.8 0.8 0.8
lockstep_cluster_efficiency_ratio{instance="drain-2"} 0.8 0.8 0.8
lockstep_queue_depth{queue="research",reason="Resources",instance="placement-1"} 2 2 2
lockstep_queue_depth{queue="research",reason="Priority",instance="placement-1"} 1 1 1
lockstep_placement_cycle_duration_seconds_count{instance="placement-1"} 0 60 120
lockstep_placement_cycle_duration_seconds_sum{instance="placement-1"} 0 0.6 1.2
`

// TestRecordingRules evaluates the recording rules in order, as one
// Prometheus evaluation would (each rule sees the ones before it), on
// clusterSeries: replicas are not double-counted.
func TestRecordingRules(t *testing.T) {
	st := promqltest.LoadedStorage(t, "load 1m\n"+indent(clusterSeries))
	t.Cleanup(func() { _ = st.Close() })
	recorded := map[string]map[string]float64{}
	for _, r := range rules(t) {
		if r.Record == "" {
			continue
		}
		app := st.Appender(context.Background())
		recorded[r.Record] = map[string]float64{}
		for _, s := range instantOn(t, st, r.Expr) {
			lb := labels.NewBuilder(s.Metric)
			lb.Set(labels.MetricName, r.Record)
			if _, err := app.Append(0, lb.Labels(), evalAt.UnixMilli(), s.F); err != nil {
				t.Fatal(err)
			}
			recorded[r.Record][s.Metric.String()] = s.F
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]map[string]float64{
		"cluster:lockstep_gpus_total:sum":        {"{}": 32},
		"cluster:lockstep_gpus_allocated:sum":    {"{}": 24},
		"cluster:lockstep_gpu_utilization:ratio": {"{}": 0.75},
		"leaf:lockstep_gpu_utilization:ratio":    {`{leaf="leaf-1"}`: 0.5, `{leaf="leaf-2"}`: 1},
		"cluster:lockstep_efficiency:ratio":      {"{}": 0.8},
		"queue:lockstep_queue_depth:sum":         {`{queue="research"}`: 3},
		"queue_reason:lockstep_queue_depth:max":  {`{queue="research", reason="Priority"}`: 1, `{queue="research", reason="Resources"}`: 2},
		// A cycle a second, 10 ms each. The rate is over the rule's 5-minute
		// window, of which the samples cover the last 2: 120 cycles in 300 s.
		"cluster:lockstep_placement_cycles:rate5m":                 {"{}": 0.4},
		"cluster:lockstep_placement_cycle_duration_seconds:mean5m": {"{}": 0.01},
	}
	for name, series := range want {
		got, ok := recorded[name]
		if !ok {
			t.Errorf("no recording rule %s", name)
			continue
		}
		if len(got) != len(series) {
			t.Errorf("%s = %v, want %v", name, got, series)
			continue
		}
		for lbls, v := range series {
			if g, ok := got[lbls]; !ok || math.Abs(g-v) > 1e-9 {
				t.Errorf("%s%s = %v (present %v), want %v; all: %v", name, lbls, g, ok, v, got)
			}
		}
	}
}
