package placement

import (
	"testing"
	"time"
)

// A pending job's reason is written at once when its code changes or the
// record was written by someone else; new numbers under the same code wait
// for reasonRefresh; this leader's own write is not repeated while the
// record lags it; a forgotten attempt starts afresh.
func TestReasonWritesPace(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	k := waitKey{"j", 1}
	r1 := reasonText{"Resources: 5 of 8 nodes", "5 have them now"}
	r2 := reasonText{"Resources: 6 of 8 nodes", "6 have them now"}
	var w reasonWrites
	if !w.due(k, reasonText{}, "Resources", r1, t0) {
		t.Fatal("first reason not due")
	}
	w.wrote(k, "Resources", r1, t0)
	steps := []struct {
		name     string
		recorded reasonText
		code     string
		next     reasonText
		at       time.Duration
		want     bool
	}{
		{"the record already says it", r1, "Resources", r1, reasonRefresh, false},
		{"the same write while the record lags", reasonText{}, "Resources", r1, time.Second, false},
		{"new numbers, same code, soon after", r1, "Resources", r2, time.Second, false},
		{"new numbers, same code, after the refresh", r1, "Resources", r2, reasonRefresh, true},
		{"a new code", r1, "Priority", reasonText{"Priority", "behind x"}, time.Second, true},
		{"the record written by someone else", reasonText{"Conflict", "n1 taken"}, "Resources", r2, time.Second, true},
	}
	for _, s := range steps {
		if got := w.due(k, s.recorded, s.code, s.next, t0.Add(s.at)); got != s.want {
			t.Errorf("%s: due %v, want %v", s.name, got, s.want)
		}
	}
	if w.due(waitKey{"j", 2}, r1, "Resources", r2, t0.Add(time.Second)) != true {
		t.Error("a new attempt waits on the old attempt's mark")
	}
	w.forget(func(k waitKey) bool { return k.attempt == 2 })
	if !w.due(k, r1, "Resources", r2, t0.Add(time.Second)) {
		t.Error("a forgotten attempt is still paced")
	}
}
