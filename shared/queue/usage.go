package queue

import (
	"math"
	"time"
)

// DefaultHalfLife is the usage half-life Slurm uses by default
// (PriorityDecayHalfLife=7-0).
const DefaultHalfLife = 7 * 24 * time.Hour

// UsageRecord is one job's GPU use over an interval.
type UsageRecord struct {
	Queue string    `json:"queue"`
	GPUs  int       `json:"gpus"`
	Start time.Time `json:"start"`
	// End is zero while the job still runs (use counts up to now).
	End time.Time `json:"end,omitzero"`
}

// DecayedUsage sums GPU-hours per queue, each instant weighted by
// 2^(-age/halfLife): a GPU-hour used halfLife ago counts half. Exactly,
// a record of g GPUs over [s, e] contributes
//
//	g · (H/ln 2) · (2^(-(now-e)/H) − 2^(-(now-s)/H))   (hours, H = halfLife)
//
// with e clipped to now (and a zero End read as now) and nothing before s.
// halfLife ≤ 0 means no decay: plain GPU-hours. It is a pure function of
// its arguments.
func DecayedUsage(records []UsageRecord, now time.Time, halfLife time.Duration) map[string]float64 {
	out := map[string]float64{}
	h := halfLife.Hours()
	for _, r := range records {
		end := r.End
		if end.IsZero() || end.After(now) {
			end = now
		}
		if !end.After(r.Start) || r.GPUs <= 0 {
			continue
		}
		g := float64(r.GPUs)
		if h <= 0 {
			out[r.Queue] += g * end.Sub(r.Start).Hours()
			continue
		}
		ageEnd, ageStart := now.Sub(end).Hours(), now.Sub(r.Start).Hours()
		out[r.Queue] += g * h / math.Ln2 * (math.Exp2(-ageEnd/h) - math.Exp2(-ageStart/h))
	}
	return out
}
