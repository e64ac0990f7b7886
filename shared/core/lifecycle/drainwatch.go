package lifecycle

import (
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// DrainStep is what the drain watch does next with one drain record.
type DrainStep int

const (
	// DrainWaits: the ranks are still checkpointing within their grace.
	DrainWaits DrainStep = iota
	// DrainForget: the gang drained is gone or on another attempt (it ended
	// by itself); the record goes, once a fresh read of the allocation
	// agrees.
	DrainForget
	// DrainEnds: the drain ends now (CompleteDrain), for the reason given.
	DrainEnds
)

// JudgeDrain decides the next step of the drain rec from its allocation a
// as the watch holds it (found: it holds one; malformed: why that record
// cannot be used, nil when it can) at now. A record that decodes but
// contradicts itself is as useless as one that does not: with no nodes it
// would read "all exited". why is the reason the drain ends, for DrainEnds.
func JudgeDrain(rec domain.DrainRecord, a domain.Allocation, found bool, malformed error, now time.Time) (step DrainStep, why string) {
	switch {
	case found && malformed != nil:
		return DrainEnds, MalformedAllocationWhy(malformed)
	case !found || a.Attempt != rec.Attempt:
		return DrainForget, ""
	case now.After(rec.Drain.Deadline):
		return DrainEnds, fmt.Sprintf("grace period of %s expired; ranks killed", rec.Drain.Deadline.Sub(rec.Drain.RequestedAt).Round(time.Second))
	case a.AllExited():
		return DrainEnds, "ranks exited"
	}
	return DrainWaits, ""
}

// MalformedAllocationWhy is why a drain ends whose allocation record
// cannot be read or used (malformed says how): nothing can tell whether
// its ranks exited, and waiting on it would retry for ever.
func MalformedAllocationWhy(malformed error) string {
	return "allocation record malformed (" + malformed.Error() + "); ranks stopped"
}
