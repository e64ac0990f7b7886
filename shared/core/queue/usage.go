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

// UsageLedger holds the decayed usage of finished jobs folded into one sum
// per queue, so that a scheduling pass costs the same however many jobs
// have ever run: a finished record's share of DecayedUsage only shrinks,
// by the same factor 2^(-Δt/halfLife) for every record, so the sum of
// many is one number rebased when time moves. Running jobs stay records
// (their use still grows) and are added by the caller with DecayedUsage.
// The zero value is not usable; use NewUsageLedger.
type UsageLedger struct {
	halfLife time.Duration
	at       time.Time // the instant sums are valued at
	sums     map[string]float64
}

// NewUsageLedger returns an empty ledger decaying with halfLife (≤ 0: no
// decay).
func NewUsageLedger(halfLife time.Duration) *UsageLedger {
	return &UsageLedger{halfLife: halfLife, sums: map[string]float64{}}
}

// Add folds a finished record (End set) into the ledger.
func (l *UsageLedger) Add(r UsageRecord) {
	if r.End.IsZero() || !r.End.After(r.Start) || r.GPUs <= 0 {
		return
	}
	if r.End.After(l.at) {
		l.rebase(r.End)
	}
	for q, v := range DecayedUsage([]UsageRecord{r}, l.at, l.halfLife) {
		l.sums[q] += v
	}
}

// Usage is the ledger's decayed GPU-hours per queue at now, added to into
// out (which may be nil).
func (l *UsageLedger) Usage(now time.Time, out map[string]float64) map[string]float64 {
	if out == nil {
		out = make(map[string]float64, len(l.sums))
	}
	f := l.factor(now)
	for q, v := range l.sums {
		out[q] += v * f
	}
	return out
}

// rebase moves the instant the sums are valued at forward to t.
func (l *UsageLedger) rebase(t time.Time) {
	f := l.factor(t)
	for q := range l.sums {
		l.sums[q] *= f
	}
	l.at = t
}

// factor is how much a GPU-hour valued at l.at is worth at t. Before l.at
// (a record's end stamped by a clock ahead of the caller's) it is above 1,
// as the exact sum would be without clipping the record's end to t.
func (l *UsageLedger) factor(t time.Time) float64 {
	h := l.halfLife.Hours()
	if h <= 0 || l.at.IsZero() {
		return 1
	}
	return math.Exp2(-t.Sub(l.at).Hours() / h)
}
