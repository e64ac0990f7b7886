package place

import (
	"fmt"
	"time"
)

// Place chooses nodes, GPUs, cores and a MASTER_PORT for a gang on snap.
// It is a pure function of its arguments: no I/O, no clock (now is the
// decision time, used only for the bounded waits), no global randomness
// (seed only orders candidates that are equal in every respect), so the
// same inputs always give the same Result. It reads snap and caches a
// derived index in it, but does not change the cluster state; call Take
// to commit the result. See doc.go for the algorithm.
func Place(snap *Snapshot, req Request, now time.Time, seed uint64) Result {
	req, err := req.normalized()
	if err != nil {
		return Result{
			Code: Unschedulable, ReasonCode: ReasonInvalidRequest,
			Reason: ReasonInvalidRequest + ": " + err.Error(), Detail: err.Error(),
		}
	}
	x := snap.prepared()
	if x.err != nil {
		return Result{
			Code: Error, ReasonCode: ReasonTopologyError,
			Reason: ReasonTopologyError + ": node labels are inconsistent",
			Detail: x.err.Error(),
		}
	}
	d := &decision{snap: snap, x: x, req: req, now: now, seed: seed}
	d.cur = newSearcher(evaluate(newCycleState(snap, x, req, false)), req.Nodes, seed)
	defer d.cur.e.recycle()
	return d.place()
}

// decision is one Place call.
type decision struct {
	snap *Snapshot
	x    *index
	req  Request
	now  time.Time
	seed uint64
	cur  *searcher // on the free resources now
	capS *searcher // on the whole cluster, idle; built on demand
}

func (d *decision) capacity() *searcher {
	if d.capS == nil {
		d.capS = newSearcher(capacityEval(d.snap, d.x, d.req), d.req.Nodes, d.seed)
	}
	return d.capS
}

// soft is a constraint with a bounded wait: maxSwitches or preferred.
type soft struct {
	name     string // for explanations: "maxSwitches 1", "preferred leaf"
	code     string // reason code while waiting
	apply    func(constraint) constraint
	deadline time.Time
	waiting  bool   // the wait runs and the constraint can be met at all
	never    string // why it can never be met on this cluster, if so
}

// blocking names the waiting constraint the gang waits for: the first
// without which (the others kept) it would place now.
func (d *decision) blocking(hard constraint, waiting []*soft) *soft {
	for _, s := range waiting {
		con := hard
		for _, o := range waiting {
			if o != s {
				con = o.apply(con)
			}
		}
		if _, ok := d.cur.search(con); ok {
			return s
		}
	}
	return waiting[0]
}

func (d *decision) softs() []*soft {
	t := d.req.Topology
	var out []*soft
	if t.Preferred != LevelNone {
		out = append(out, &soft{
			name: "preferred " + string(t.Preferred), code: ReasonWaitingForTopology,
			apply:    func(c constraint) constraint { return c.with(t.Preferred) },
			deadline: d.req.WaitEnd(t.PreferredWait, d.now),
		})
	}
	if t.MaxSwitches > 0 {
		out = append(out, &soft{
			name: fmt.Sprintf("maxSwitches %d", t.MaxSwitches), code: ReasonWaitingForSwitches,
			apply:    func(c constraint) constraint { return c.withMaxLeaves(t.MaxSwitches) },
			deadline: d.req.WaitEnd(t.WaitForSwitches, d.now),
		})
	}
	return out
}

// place applies the constraints in order:
//  1. the required level and every soft constraint;
//  2. failing that, soft constraints whose wait is over, or that can never
//     be met on this cluster, are dropped (keeping as many as still
//     place), and a placement found so is marked Relaxed;
//  3. failing that, the gang waits: for a soft constraint still waiting if
//     it would place without it, else for resources (or for its required
//     level); it is Unschedulable when even the idle cluster cannot hold
//     it within the required level.
func (d *decision) place() Result {
	hard := constraint{}.with(d.req.Topology.Required)
	softs := d.softs()
	full := hard
	for _, s := range softs {
		full = s.apply(full)
	}
	if ch, ok := d.cur.search(full); ok {
		return d.placed(ch, nil)
	}
	keep := hard
	var waiting, dropped []*soft
	for _, s := range softs {
		if _, ok := d.capacity().search(s.apply(hard)); !ok {
			s.never = d.explainMiss(d.capacity(), s.apply(hard))
		}
		s.waiting = s.never == "" && d.now.Before(s.deadline)
		if s.waiting {
			waiting = append(waiting, s)
			keep = s.apply(keep)
		} else {
			dropped = append(dropped, s)
		}
	}
	if len(dropped) > 0 {
		// Keep as many dropped constraints as still place: with two, try
		// each alone (preferred first) before neither.
		if len(dropped) == 2 {
			for k, s := range dropped {
				if ch, ok := d.cur.search(s.apply(keep)); ok {
					return d.placed(ch, dropped[1-k:2-k])
				}
			}
		}
		if ch, ok := d.cur.search(keep); ok {
			return d.placed(ch, dropped)
		}
	}
	if len(waiting) > 0 {
		if _, ok := d.cur.search(hard); ok {
			return d.waitFor(d.blocking(hard, waiting), keep)
		}
	}
	if _, ok := d.capacity().search(hard); !ok {
		return d.unschedulable(hard)
	}
	if hard != (constraint{}) {
		if _, ok := d.cur.search(constraint{}); ok {
			return d.wait(ReasonRequiredTopology, hard)
		}
	}
	return d.wait(ReasonResources, hard)
}
