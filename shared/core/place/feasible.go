package place

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Feasible reports whether spec's gang could ever be placed on empty, a
// snapshot of the whole inventory up and idle (EmptyCluster): detail says
// why not. A hard constraint the whole cluster cannot meet is final; soft
// ones (preferred levels, maxSwitches) only delay, so they are judged as
// expired: a wait that started at the epoch is long over by farFuture.
// Admission rejects what is not feasible; `submit --test-only` asks the
// same question.
func Feasible(empty *Snapshot, jobID string, spec jobspec.Spec) (detail string, ok bool) {
	req := RequestFor(jobID, spec)
	req.WaitSince = time.Unix(0, 0).UTC()
	res := Place(empty, req, farFuture, 0)
	if res.Code == Unschedulable {
		return res.Detail, false
	}
	return "", true
}

// farFuture is a "now" past every wait started at the epoch.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// FewestLeaves is the fewest leaf switches req's gang could span on snap's
// nodes all up and idle, within its required level; 0 when it could never
// be placed (or the snapshot's topology is inconsistent). The queue
// policy compares a placement's leaves with it: a gang placed on more
// than this is spread by circumstance, not by necessity.
func FewestLeaves(snap *Snapshot, req Request) int {
	req, err := req.normalized()
	if err != nil {
		return 0
	}
	x := snap.prepared()
	if x.err != nil {
		return 0
	}
	s := newSearcher(capacityEval(snap, x, req), req.Nodes, 0)
	c, ok := s.best(constraint{}.with(req.Topology.Required))
	if !ok {
		return 0
	}
	return c.leaves
}

// maxFeasibilityAnswers bounds a Feasibility's memory: past it, answers
// are no longer kept (each is then worked out again).
const maxFeasibilityAnswers = 4096

// Feasibility is Feasible with a memory, for one empty snapshot: a spec
// whose request (RequestFor without the job ID: every field, not only its
// Shape) was judged before gets the same answer without a search.
// Admission asks for every submission, and submissions repeat a few
// requests; on 1,000 nodes a search took 80 µs a job at 500 jobs/s. Each
// answer is worked out on its key, so the memory always answers as
// Feasible does for the key; that this is Feasible's answer for every job
// ID rests on Place not reading the job ID (TestPlaceDoesNotReadJobID).
// Not safe for concurrent use; make a new one for a new snapshot.
type Feasibility struct {
	empty   *Snapshot
	answers map[Request]feasibleAnswer
}

type feasibleAnswer struct {
	detail string
	ok     bool
}

// NewFeasibility remembers Feasible's answers on empty (EmptyCluster).
func NewFeasibility(empty *Snapshot) *Feasibility {
	return &Feasibility{empty: empty, answers: map[Request]feasibleAnswer{}}
}

// Check is Feasible(empty, spec.ID, spec), from memory when it can be.
func (f *Feasibility) Check(spec jobspec.Spec) (detail string, ok bool) {
	key := RequestFor("", spec)
	if a, found := f.answers[key]; found {
		return a.detail, a.ok
	}
	detail, ok = Feasible(f.empty, "", spec) // worked out on the key itself
	if len(f.answers) < maxFeasibilityAnswers {
		f.answers[key] = feasibleAnswer{detail: detail, ok: ok}
	}
	return detail, ok
}
