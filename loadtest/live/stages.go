package live

import (
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/stats"
)

// Stage is one leg of a job's way from submission to all ranks running,
// over the jobs that went through it once (no requeue): where the
// submit → running latency goes. The legs of one job add up to its
// latency; their p99s need not, as the slowest jobs of each leg differ.
type Stage struct {
	Name string     `json:"name"`
	Ms   stats.Dist `json:"ms"`
}

// Stage names, in a job's order.
const (
	StageAdmission = "submit → admitted (admission)"
	StageReserve   = "admitted → reserved (placement's cycle, gang's reservation)"
	StageAssign    = "reserved → its last node starts it (the assignments through etcd's watch)"
	StageBarrier   = "→ running (that node's report, gang's reports and the launch barrier)"
)

// launchStages splits each job's latency at its events and at the last
// of its virtual agents' starts. Jobs requeued, or whose times are out of
// order (a start seen before the reservation event's time, which clocks
// allow), are left out of every leg, so that each leg counts the same
// jobs.
func launchStages(ids []string, tls map[string]timeline, launches map[string]launch) []Stage {
	names := []string{StageAdmission, StageReserve, StageAssign, StageBarrier}
	legs := make([][]float64, len(names))
	ms := func(a, b time.Time) float64 { return float64(b.Sub(a)) / float64(time.Millisecond) }
	for _, id := range ids {
		tl, ok := tls[id]
		l, launched := launches[id]
		if !ok || !launched || tl.requeues > 0 || l.attempt != 1 {
			continue
		}
		at := []time.Time{tl.submitted, tl.admitted, tl.reserved, l.seen, tl.running}
		ordered := true
		for i := 1; i < len(at); i++ {
			ordered = ordered && !at[i].IsZero() && !at[i].Before(at[i-1])
		}
		if !ordered || at[0].IsZero() {
			continue
		}
		for i := range legs {
			legs[i] = append(legs[i], ms(at[i], at[i+1]))
		}
	}
	out := make([]Stage, len(names))
	for i, name := range names {
		out[i] = Stage{Name: name, Ms: stats.Summarize(legs[i])}
	}
	return out
}
