// Package preempt chooses which running gangs to evict for a higher-priority
// gang that cannot be placed otherwise. It is pure, like placement: the
// choice is a function of the snapshot, the request and the candidates.
//
// Rules: only gangs of strictly lower priority are candidates; a gang is
// evicted whole (its drain checkpoints every rank) and only gangs whose
// every rank runs are candidates (a gang still launching is never split);
// victims are chosen only if releasing them yields a placement for the
// preemptor that honours its topology constraints — never for a preemptor
// that would still not fit. Among the sets that work, fewer gangs is
// better, then less work lost since the victims' last checkpoints.
//
// Search: every single candidate, then every pair (exact for the common
// case), then a greedy pass that adds candidates cheapest-first until the
// preemptor fits and prunes the ones it does not need. Candidates are
// bounded (MaxCandidates, cheapest first) so the pair search stays small.
package preempt

import (
	"sort"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// Candidate is a running gang that could be evicted.
type Candidate struct {
	ID        string           `json:"id"`
	Priority  int              `json:"priority"`
	Placement domain.Placement `json:"placement"`
	// LostWork is the compute done since its last checkpoint (or start):
	// what an eviction costs if the drain's own checkpoint failed.
	LostWork time.Duration `json:"lostWork"`
}

// MaxCandidates bounds the candidates considered (cheapest first).
const MaxCandidates = 64

// Choice is the victims and where the preemptor would then go.
type Choice struct {
	Victims   []string          `json:"victims"`
	Placement *domain.Placement `json:"placement"`
	LostWork  time.Duration     `json:"lostWork"`
}

// Choose returns the cheapest set of victims that makes room for req, or
// false when no set of lower-priority gangs does.
func Choose(snap *place.Snapshot, req place.Request, priority int, cands []Candidate, now time.Time, seed uint64) (Choice, bool) {
	var eligible []Candidate
	for _, c := range cands {
		if c.Priority < priority {
			eligible = append(eligible, c)
		}
	}
	sort.SliceStable(eligible, func(i, j int) bool {
		if eligible[i].LostWork != eligible[j].LostWork {
			return eligible[i].LostWork < eligible[j].LostWork
		}
		return eligible[i].ID < eligible[j].ID
	})
	if len(eligible) > MaxCandidates {
		eligible = eligible[:MaxCandidates]
	}
	try := func(set []Candidate) (*domain.Placement, bool) {
		s := snap.Clone()
		for _, c := range set {
			s.Release(c.Placement)
		}
		r := place.Place(s, req, now, seed)
		return r.Placement, r.Code == place.Placed
	}
	best, found := Choice{}, false
	consider := func(set []Candidate) {
		p, ok := try(set)
		if !ok {
			return
		}
		c := choiceOf(set, p)
		if !found || len(c.Victims) < len(best.Victims) ||
			(len(c.Victims) == len(best.Victims) && c.LostWork < best.LostWork) {
			best, found = c, true
		}
	}
	for i := range eligible {
		consider(eligible[i : i+1])
	}
	if found {
		return best, true
	}
	for i := range eligible {
		for j := i + 1; j < len(eligible); j++ {
			consider([]Candidate{eligible[i], eligible[j]})
		}
	}
	if found {
		return best, true
	}
	// Greedy: add cheapest-first until it fits, then drop what is not needed.
	var set []Candidate
	fits := false
	for _, c := range eligible {
		set = append(set, c)
		if _, ok := try(set); ok {
			fits = true
			break
		}
	}
	if !fits {
		return Choice{}, false
	}
	for i := len(set) - 1; i >= 0; i-- {
		without := append(append([]Candidate(nil), set[:i]...), set[i+1:]...)
		if _, ok := try(without); ok {
			set = without
		}
	}
	p, _ := try(set)
	return choiceOf(set, p), true
}

func choiceOf(set []Candidate, p *domain.Placement) Choice {
	c := Choice{Placement: p}
	for _, v := range set {
		c.Victims = append(c.Victims, v.ID)
		c.LostWork += v.LostWork
	}
	sort.Strings(c.Victims)
	return c
}
