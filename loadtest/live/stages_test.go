package live

import (
	"testing"
	"time"
)

// Each job's legs add up to its submit → running latency; a requeued
// job, one started by another attempt, and one whose times are out of
// order count in no leg.
func TestLaunchStagesSplitEachJobsLatency(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tls := map[string]timeline{
		"a":         {submitted: at(0), admitted: at(5), reserved: at(40), running: at(100)},
		"b":         {submitted: at(10), admitted: at(12), reserved: at(20), running: at(35)},
		"requeued":  {submitted: at(0), admitted: at(1), reserved: at(2), running: at(9), requeues: 1},
		"reordered": {submitted: at(0), admitted: at(1), reserved: at(8), running: at(9)},
		"other":     {submitted: at(0), admitted: at(1), reserved: at(2), running: at(9)},
		"unstarted": {submitted: at(0), admitted: at(1)},
	}
	launches := map[string]launch{
		"a":         launch{}.started(1, at(70)).started(1, at(60)),
		"b":         launch{}.started(1, at(30)),
		"requeued":  launch{}.started(1, at(3)),
		"reordered": launch{}.started(1, at(7)), // before its reservation's event
		"other":     launch{}.started(2, at(3)),
	}
	stages := launchStages([]string{"a", "b", "requeued", "reordered", "other", "unstarted", "unknown"}, tls, launches)
	want := [][]float64{{5, 2}, {35, 8}, {30, 10}, {30, 5}} // per leg, jobs a and b
	if len(stages) != len(want) {
		t.Fatalf("%d stages, want %d", len(stages), len(want))
	}
	for i, s := range stages {
		if s.Ms.N != 2 {
			t.Errorf("%s: %d jobs, want a and b only", s.Name, s.Ms.N)
			continue
		}
		if s.Ms.Max != max(want[i][0], want[i][1]) {
			t.Errorf("%s: max %g ms, want %g", s.Name, s.Ms.Max, max(want[i][0], want[i][1]))
		}
	}
	// The legs' means add up to the mean latency of a (100 ms) and b (25).
	var sum float64
	for _, s := range stages {
		sum += s.Ms.Mean
	}
	if sum < 62.499 || sum > 62.501 {
		t.Errorf("the legs' means add to %g ms, want 62.5", sum)
	}
	// A later attempt's start replaces the earlier attempt's.
	if l := (launch{}).started(1, at(50)).started(2, at(10)); l.attempt != 2 || !l.seen.Equal(at(10)) {
		t.Errorf("launch %+v, want attempt 2 started at 10 ms", l)
	}
}
