package view

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Age renders a duration like squeue's TIME column: 42s, 3m07s, 5h02m, 3d.
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// JobColor is the colour a job's GPU cells get: a hue from a hash of its
// ID, so that a job keeps its colour across pages and updates and
// neighbouring jobs rarely share one.
func JobColor(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return fmt.Sprintf("hsl(%d,62%%,52%%)", h.Sum32()%360)
}

// Percent is 100·part/whole, 0 for an empty whole.
func Percent(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
