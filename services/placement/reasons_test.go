package placement

import (
	"testing"
	"time"
)

// A pending job's first reason waits until it has waited
// firstReasonAfter; after that, a reason is written at once when its code
// changes or the record was written by someone else (even back to this
// leader's last text); new numbers under the same code wait for
// reasonRefresh; nothing is written while the record lags this leader's
// own write (an older revision); a forgotten attempt starts afresh.
func TestReasonWritesPace(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	since := t0.Add(-firstReasonAfter) // pending long enough for a reason
	k := waitKey{"j", 1}
	r1 := reasonText{"Resources: 5 of 8 nodes", "5 have them now"}
	r2 := reasonText{"Resources: 6 of 8 nodes", "6 have them now"}
	var w reasonWrites
	if w.due(k, t0, reasonText{}, 1, "Resources", r1, t0.Add(firstReasonAfter-time.Millisecond)) {
		t.Error("a reason due before its attempt has waited firstReasonAfter")
	}
	if w.due(k, t0, reasonText{"Conflict", "n1 taken"}, 1, "Resources", r1, t0.Add(firstReasonAfter/2)) {
		t.Error("a reason due before its attempt has waited firstReasonAfter, over someone else's")
	}
	if !w.due(k, since, reasonText{}, 1, "Resources", r1, t0) {
		t.Fatal("first reason not due")
	}
	w.wrote(k, "Resources", r1, 10, t0) // the write made revision 10
	held := reasonText{"JobArrayTaskLimit", "2 of 2 tasks placed"}
	steps := []struct {
		name     string
		recorded reasonText
		rev      uint64
		code     string
		next     reasonText
		at       time.Duration
		want     bool
	}{
		{"the record already says it", r1, 10, "Resources", r1, reasonRefresh, false},
		{"the same write while the record lags", reasonText{}, 9, "Resources", r1, time.Second, false},
		{"new numbers while the record lags", reasonText{}, 9, "Resources", r2, reasonRefresh, false},
		{"new numbers, same code, soon after", r1, 10, "Resources", r2, time.Second, false},
		{"new numbers, same code, after the refresh", r1, 10, "Resources", r2, reasonRefresh, true},
		{"a new code", r1, 10, "Priority", reasonText{"Priority", "behind x"}, time.Second, true},
		{"the record written by someone else", reasonText{"Conflict", "n1 taken"}, 11, "Resources", r2, time.Second, true},
		{"written over since, and ours is due again", held, 12, "Resources", r1, time.Second, true},
	}
	for _, s := range steps {
		// since is now: a written attempt's reasons are not held back.
		if got := w.due(k, t0.Add(s.at), s.recorded, s.rev, s.code, s.next, t0.Add(s.at)); got != s.want {
			t.Errorf("%s: due %v, want %v", s.name, got, s.want)
		}
	}
	if w.due(waitKey{"j", 2}, since, r1, 10, "Resources", r2, t0.Add(time.Second)) != true {
		t.Error("a new attempt waits on the old attempt's mark")
	}
	w.forget(func(k waitKey) bool { return k.attempt == 2 })
	if !w.due(k, since, r1, 10, "Resources", r2, t0.Add(time.Second)) {
		t.Error("a forgotten attempt is still paced")
	}
}
