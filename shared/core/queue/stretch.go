package queue

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// A gang spread over more switches runs slower: its collectives cross
// more links (the seed measured 15–25 % slower across spines). When a
// job's topology wait runs out, placement drops the switch limit and the
// job would start spread now; but a long job may finish sooner by waiting
// for a compact placement that running jobs will free. The policy compares
// the two expected finishes, start + time limit × stretch (a spread one's
// slowdown weighed by Stretch.Weight, below), and holds the
// job (with the plan's reservation on the compact placement) when waiting
// wins. A 36-day 4-node job stretched 1.4× across spines loses two weeks;
// waiting a few days for one leaf is the better deal, and a 1-hour job
// never waits past its wait for it.
const (
	// DefaultLeafStretch is the expected slowdown per leaf switch a gang
	// spans beyond its first.
	DefaultLeafStretch = 0.05
	// DefaultSpineStretch is the expected slowdown per spine (level-1
	// switch) a gang spans beyond its first.
	DefaultSpineStretch = 0.20
	// DefaultSpreadWeight is how many times its own expected slowdown a
	// spread placement counts when the policy weighs it against waiting
	// for a compact one (Stretch.Weight).
	DefaultSpreadWeight = 100
)

// Why a weight, and why so large: a gang that starts spread pays its own
// slowdown, but it also splits leaves that later gangs need whole, so
// they spread in turn, and the nodes it would have taken while it waits
// are not left idle: smaller jobs backfill them. Weighing only its own
// slowdown (5 % per extra leaf) let a 10-second gang wait at most half a
// second for a leaf, so under a backlog gangs kept spreading: on the
// issue-22 burst (32 nodes, 4 leaves, 1–10 s jobs) 107 of 353 multi-node
// jobs over three seeds ran on extra leaves. At 100 none did, and the
// makespan fell from 1.09–1.11 to 1.05–1.07 × its lower bound; on the
// Philly replay gangs on their fewest leaves rose from 56.6 to 89.0 %
// with utilisation 79.6 → 79.9 % and mean delay 5.2 → 5.4 d
// (docs/benchmarks.md). The wait stays bounded: a gang waits only for a
// reservation with a known start, which it then holds.

// Stretch is the slowdown model the policy weighs placements with.
type Stretch struct {
	// Leaf and Spine are the expected slowdowns per extra leaf and per
	// extra spine: 0 means the default, negative means none.
	Leaf  float64 `json:"leaf,omitempty"`
	Spine float64 `json:"spine,omitempty"`
	// Weight multiplies a spread placement's expected slowdown when the
	// policy decides whether to wait for a compact one (it is not a
	// prediction of run time): 0 means DefaultSpreadWeight, 1 weighs the
	// gang's own slowdown alone.
	Weight float64 `json:"weight,omitempty"`
}

func (s Stretch) leaf() float64  { return orDefault(s.Leaf, DefaultLeafStretch) }
func (s Stretch) spine() float64 { return orDefault(s.Spine, DefaultSpineStretch) }

func (s Stretch) weight() float64 {
	if s.Weight == 0 {
		return DefaultSpreadWeight
	}
	return s.Weight
}

// Off reports whether the model expects no slowdown at all.
func (s Stretch) Off() bool { return s.leaf() == 0 && s.spine() == 0 }

func orDefault(v, def float64) float64 {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// Factor is the run-time multiplier of placement p:
// 1 + Leaf × (leaves − 1) + Spine × (spines − 1), where leaves and spines
// count the distinct leaf switches and the switches one level above them
// that p's nodes hang from. Nodes without a place in topo count nothing.
func (s Stretch) Factor(topo interface{ Path(string) []string }, p domain.Placement) float64 {
	var leaves, spines []string
	for _, n := range p.Nodes {
		path := topo.Path(n.Node)
		if len(path) > 0 && !slices.Contains(leaves, path[0]) {
			leaves = append(leaves, path[0])
		}
		if len(path) > 1 && !slices.Contains(spines, path[1]) {
			spines = append(spines, path[1])
		}
	}
	return 1 + s.leaf()*float64(max(len(leaves)-1, 0)) + s.spine()*float64(max(len(spines)-1, 0))
}

// weighedEnd is when j, started at start on p, ends as the policy weighs
// it: its time limit stretched by p's slowdown × the spread weight.
func (pl *planner) weighedEnd(j PendingJob, start time.Time, p domain.Placement) time.Time {
	return pl.endWith(j, start, p, pl.in.Config.Stretch.weight())
}

// expectedEnd is when j, started at start on p, is expected to end: its
// time limit stretched by p's slowdown (what a user is told).
func (pl *planner) expectedEnd(j PendingJob, start time.Time, p domain.Placement) time.Time {
	return pl.endWith(j, start, p, 1)
}

func (pl *planner) endWith(j PendingJob, start time.Time, p domain.Placement, weight float64) time.Time {
	f := 1.0
	if topo, err := pl.real.snap.ResolvedTopology(); err == nil && topo != nil {
		f = 1 + weight*(pl.in.Config.Stretch.Factor(topo, p)-1)
	}
	// Bounded: a year-long limit × a large weight would overflow.
	return start.Add(time.Duration(min(float64(j.TimeLimit)*f, float64(forever))))
}

// forever stands for a topology wait that never runs out.
const forever = 100 * 365 * 24 * time.Hour

// spreadNeedlessly reports whether j, placed on leaves leaf switches,
// spans more than its fewest possible although it set no topology limit:
// a multi-node gang without constraints is compact by default, so it is
// weighed as one whose switch wait ran out (compactSooner): it waits for
// its fewest leaves when, and only when, the stretch model says that ends
// it sooner.
func (pl *planner) spreadNeedlessly(j PendingJob, leaves int) bool {
	t := j.Request.Topology
	if j.Request.Nodes < 2 || t.MaxSwitches > 0 || t.Required != place.LevelNone || t.Preferred != place.LevelNone {
		return false
	}
	k := pl.fewestLeaves(j.Request)
	return k > 0 && leaves > k
}

// fewestLeaves is place.FewestLeaves, remembered per request shape: it
// depends on the nodes and labels only, which a plan does not change.
func (pl *planner) fewestLeaves(r place.Request) int {
	r.JobID, r.WaitSince = "", time.Time{}
	if k, ok := pl.fewest[r]; ok {
		return k
	}
	k := place.FewestLeaves(pl.real.snap, r)
	pl.fewest[r] = k
	return k
}

// spread reports whether a placement on leaves leaf switches is one the
// stretch model should weigh against waiting: relaxed after a topology
// wait, or needlessly spread (spreadNeedlessly).
func (pl *planner) spread(j PendingJob, relaxed bool, leaves int) bool {
	return relaxed || pl.spreadNeedlessly(j, leaves)
}

// compactReservation is j's earliest reservation on a placement that keeps
// its topology limits, as if its waits never ran out (for a gang without
// limits: its fewest leaves); false when there is none with a known start.
func (pl *planner) compactReservation(j PendingJob) (*Reservation, bool) {
	c := j
	t := &c.Request.Topology
	if t.MaxSwitches == 0 && t.Required == place.LevelNone && t.Preferred == place.LevelNone {
		t.MaxSwitches, t.WaitForSwitches = pl.fewestLeaves(j.Request), forever
	}
	if t.WaitForSwitches > 0 {
		t.WaitForSwitches = forever
	}
	if t.PreferredWait > 0 {
		t.PreferredWait = forever
	}
	if c.Request.WaitSince.IsZero() {
		c.Request.WaitSince = pl.in.Now
	}
	res, ok := pl.reserve(c)
	if !ok || !res.Known() || res.relaxed || res.Start.Sub(pl.in.Now) >= forever/2 {
		return nil, false
	}
	return res, true
}

// compactSooner reports whether j, which could start at start on the
// relaxed placement spread, would end sooner on a compact placement that
// running jobs will free, and that placement's reservation.
func (pl *planner) compactSooner(j PendingJob, start time.Time, spread domain.Placement) (*Reservation, Decision, bool) {
	if j.TimeLimit <= 0 || pl.in.Config.Stretch.Off() {
		return nil, Decision{}, false
	}
	// A compact placement starts now at the earliest and runs at least
	// the time limit: when spread costs nothing over that, skip the search.
	spreadEnd := pl.weighedEnd(j, start, spread)
	if !pl.in.Now.Add(j.TimeLimit).Before(spreadEnd) {
		return nil, Decision{}, false
	}
	compact, ok := pl.compactReservation(j)
	if !ok {
		return nil, Decision{}, false
	}
	compactEnd := pl.weighedEnd(j, compact.Start, compact.Placement)
	if !compactEnd.Before(spreadEnd) {
		return nil, Decision{}, false
	}
	now := pl.in.Now
	return compact, Decision{JobID: j.ID, Queue: j.Queue, Action: Pending, ReasonCode: place.ReasonWaitingForSwitches,
		Reason: fmt.Sprintf("%s (compact from %s)", place.ReasonWaitingForSwitches, clock(compact.Start, now)),
		Detail: fmt.Sprintf("spread over more switches from %s it would end ≈ %s, weighed as ≈ %s (its slowdown counts %g×: spreading splits leaves others need); %s from %s ends ≈ %s",
			clock(start, now), clock(pl.expectedEnd(j, start, spread), now), clock(spreadEnd, now), pl.in.Config.Stretch.weight(),
			summary(compact.Placement), startPhrase(*compact, now), clock(pl.expectedEnd(j, compact.Start, compact.Placement), now))}, true
}

// waitsForCompact is compactSooner for the job that gets the plan's
// reservation: when waiting wins it holds the reservation on the compact
// placement, so that backfill cannot take it.
func (pl *planner) waitsForCompact(j PendingJob, start time.Time, spread domain.Placement) bool {
	compact, d, ok := pl.compactSooner(j, start, spread)
	if !ok {
		return false
	}
	pl.hold(compact)
	pl.add(d)
	return true
}

// waitsRatherThanSpread is compactSooner for a job behind the reservation that
// could backfill now only spread (r relaxed, or needlessly spread): it keeps waiting when a
// compact placement would end it sooner, and holds that placement while
// the plan has a hold to spare (maxHolds, holds.go); it is reconsidered on
// every plan, and gets the reservation once it is first in line.
func (pl *planner) waitsRatherThanSpread(j PendingJob, r place.Result) bool {
	if !pl.spread(j, r.Relaxed, r.Leaves) {
		return false
	}
	compact, d, ok := pl.compactSooner(j, pl.in.Now, *r.Placement)
	if ok {
		if pl.mayHold() {
			pl.hold(compact)
		}
		pl.add(d)
	}
	return ok
}
