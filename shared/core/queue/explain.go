package queue

import (
	"fmt"
	"strings"
	"time"
)

// clock renders t for a pending reason, in now's location: "14:02" on
// now's day, "Jun 3 14:02" otherwise.
func clock(t, now time.Time) string {
	t = t.In(now.Location())
	y1, m1, d1 := t.Date()
	y2, m2, d2 := now.Date()
	if y1 == y2 && m1 == m2 && d1 == d2 {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

func startPhrase(r Reservation, now time.Time) string {
	if !r.Known() {
		return "an unknown time (running jobs without a time limit must end first)"
	}
	return "≈ " + clock(r.Start, now)
}

func listIDs(ids []string, limit int) string {
	if len(ids) <= limit {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:limit], ", ") + fmt.Sprintf(" and %d more", len(ids)-limit)
}
