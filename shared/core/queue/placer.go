package queue

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// placer runs place.Place on one snapshot for a plan, remembering
// outcomes by gang shape until the snapshot next changes: with thousands
// of pending jobs of a few shapes, one decision answers for all of them.
// Only outcomes that do not depend on the job's own wait clock are
// remembered, and a remembered success only answers "does it fit" (probe),
// never "where" (place).
type placer struct {
	snap *place.Snapshot
	seed uint64
	memo map[memoKey]place.Result
}

type memoKey struct {
	shape                place.Shape // what the node filters read
	nodes                int
	required, preferred  place.Level
	maxSwitches          int
	switchWait, prefWait bool // whether each wait still runs
	at                   time.Time
}

func newPlacer(snap *place.Snapshot, seed uint64) *placer {
	return &placer{snap: snap, seed: seed, memo: map[memoKey]place.Result{}}
}

func keyOf(r place.Request, at time.Time) memoKey {
	t := r.Topology
	return memoKey{
		shape: r.Shape(), nodes: r.Nodes,
		required: t.Required, preferred: t.Preferred, maxSwitches: t.MaxSwitches,
		switchWait: at.Before(r.WaitEnd(t.WaitForSwitches, at)),
		prefWait:   at.Before(r.WaitEnd(t.PreferredWait, at)),
		at:         at,
	}
}

// place decides j on the snapshot at time at. A remembered failure
// answers; a success is always recomputed, since where a job goes depends
// on its own seed.
func (p *placer) place(j PendingJob, at time.Time) place.Result {
	return p.decide(j, at, false)
}

// probe is place for a job that will not start now: it only needs to know
// whether (and why not) j fits, so a remembered success answers too.
func (p *placer) probe(j PendingJob, at time.Time) place.Result {
	return p.decide(j, at, true)
}

func (p *placer) decide(j PendingJob, at time.Time, anyPlaced bool) place.Result {
	req := j.Request
	if req.JobID == "" {
		req.JobID = j.ID
	}
	k := keyOf(req, at)
	if r, ok := p.memo[k]; ok && (r.Code != place.Placed || anyPlaced) {
		return r
	}
	r := place.Place(p.snap, req, at, jobSeed(p.seed, j.ID))
	switch {
	case r.Code == place.Placed && !r.Relaxed:
		p.memo[k] = r
	case r.Code == place.Placed:
		// A relaxed result says when the wait ended: the job's own clock.
	case r.ReasonCode == place.ReasonResources, r.ReasonCode == place.ReasonRequiredTopology,
		r.ReasonCode == place.ReasonNoNodes, r.ReasonCode == place.ReasonInvalidRequest:
		p.memo[k] = r
	}
	return r
}

func (p *placer) take(pl domain.Placement) {
	p.snap.Take(pl)
	clear(p.memo)
}

func (p *placer) release(pl domain.Placement) {
	p.snap.Release(pl)
	clear(p.memo)
}

// jobSeed derives a job's placement seed from the plan's, so a decision
// replays from (input, job ID) alone.
func jobSeed(seed uint64, id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return seed ^ h
}
