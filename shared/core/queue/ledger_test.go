package queue

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Folding finished records into the ledger, in any order, gives what
// DecayedUsage gives over the same records, at any later instant.
func TestUsageLedgerMatchesDecayedUsage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, halfLife := range []time.Duration{DefaultHalfLife, time.Hour, 0} {
		var records []UsageRecord
		for range 500 {
			start := t0.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
			records = append(records, UsageRecord{
				Queue: []string{"a", "b", "c"}[rng.IntN(3)],
				GPUs:  1 + rng.IntN(64),
				Start: start,
				End:   start.Add(time.Duration(rng.Int64N(int64(72 * time.Hour)))),
			})
		}
		l := NewUsageLedger(halfLife)
		for _, i := range rng.Perm(len(records)) {
			l.Add(records[i])
		}
		for _, now := range []time.Time{t0.Add(64 * 24 * time.Hour), t0.Add(365 * 24 * time.Hour)} {
			want := DecayedUsage(records, now, halfLife)
			got := l.Usage(now, nil)
			for q, w := range want {
				if math.Abs(got[q]-w) > 1e-9*math.Max(1, w) {
					t.Errorf("half-life %s, %s: queue %s: ledger %.9g, DecayedUsage %.9g", halfLife, now.Sub(t0), q, got[q], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("half-life %s: ledger has queues %v, want %v", halfLife, got, want)
			}
		}
	}
}
