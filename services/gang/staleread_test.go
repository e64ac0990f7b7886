package gang

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestMayBeStaleRead(t *testing.T) {
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	fresh := domain.Proposal{JobID: "a", Attempt: 1, JobRevision: 7, ProposedAt: now.Add(-time.Second)}
	for _, tc := range []struct {
		name      string
		prop      func(p domain.Proposal) domain.Proposal
		delivered uint64
		want      bool
	}{
		{"fresh, first delivery", func(p domain.Proposal) domain.Proposal { return p }, 1, true},
		{"fresh, last read", func(p domain.Proposal) domain.Proposal { return p }, staleReadDeliveries - 1, true},
		{"read often enough", func(p domain.Proposal) domain.Proposal { return p }, staleReadDeliveries, false},
		{"no revision: placement saw no record", func(p domain.Proposal) domain.Proposal { p.JobRevision = 0; return p }, 1, false},
		{"no time: not placement's", func(p domain.Proposal) domain.Proposal { p.ProposedAt = time.Time{}; return p }, 1, false},
		{"old", func(p domain.Proposal) domain.Proposal { p.ProposedAt = now.Add(-staleReadWindow); return p }, 1, false},
		{"far in the future", func(p domain.Proposal) domain.Proposal { p.ProposedAt = now.Add(staleReadWindow); return p }, 1, false},
		{"a little ahead (skew)", func(p domain.Proposal) domain.Proposal { p.ProposedAt = now.Add(2 * time.Second); return p }, 1, true},
	} {
		if got := mayBeStaleRead(tc.prop(fresh), tc.delivered, now); got != tc.want {
			t.Errorf("%s: mayBeStaleRead = %v, want %v", tc.name, got, tc.want)
		}
	}
}
