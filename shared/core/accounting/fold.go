// Package accounting makes `lockstep history` and `lockstep usage` from
// job events: Fold turns each job's lifecycle events (admitted, reserved,
// running, requeued and the final one) into one row, as sacct shows a
// job, and Usage sums rows per owner and queue, as sreport does. Pure:
// the events come from the accounting history stream, read by the CLI.
package accounting

import (
	"cmp"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
)

// Row is one job's accounting line.
type Row struct {
	JobID string `json:"id"`
	Owner string `json:"owner,omitempty"`
	Queue string `json:"queue,omitempty"`
	// State is the job's state as its latest event says: pending,
	// reserved, running, or how it ended.
	State       domain.State `json:"state"`
	Reason      string       `json:"reason,omitempty"`
	SubmittedAt time.Time    `json:"submittedAt,omitzero"`
	StartedAt   time.Time    `json:"startedAt,omitzero"`
	EndedAt     time.Time    `json:"endedAt,omitzero"`
	// Elapsed is from the last start to the end (or to now, running).
	Elapsed  time.Duration `json:"elapsed"`
	Nodes    int           `json:"nodes"`
	GPUs     int           `json:"gpus"`
	GPUHours float64       `json:"gpuHours"`
	ExitCode *int          `json:"exitCode,omitempty"`
	Attempt  int           `json:"attempt"`
	Restarts int           `json:"restarts"`
	// Timing is η's terms as the latest event carrying them says.
	Timing     domain.Timing `json:"timing"`
	Efficiency float64       `json:"efficiency"`
}

// lifecycleStates is the state each lifecycle event leaves its job in.
var lifecycleStates = map[events.Type]domain.State{
	events.Admitted: domain.StatePending, events.Requeued: domain.StatePending,
	events.Reserved: domain.StateReserved, events.Running: domain.StateRunning,
	events.Rejected: domain.StateRejected, events.Succeeded: domain.StateSucceeded,
	events.Failed: domain.StateFailed, events.Cancelled: domain.StateCancelled,
	events.Timeout: domain.StateTimeout,
}

// stateOf is the state a lifecycle event leaves its job in; ok false for
// an event that says nothing about it.
func stateOf(t events.Type) (domain.State, bool) {
	s, ok := lifecycleStates[t]
	return s, ok
}

// Fold makes one row per job from the jobs' events, in any order, the
// rows ordered by submit time (then ID). An event says nothing of its
// job's other events, so each field comes from the latest event that has
// it; once a job's final event is folded, nothing later changes its state
// (a late, re-delivered running cannot revive it). now is the end of a
// job that has not ended, for its elapsed time and GPU-hours. Events that
// are not a job's lifecycle (node events, draining, conflict) are ignored.
func Fold(evs []events.Event, now time.Time) []Row {
	byJob := map[string][]events.Event{}
	for _, ev := range evs {
		if _, ok := stateOf(ev.Type); ok && ev.JobID != "" {
			byJob[ev.JobID] = append(byJob[ev.JobID], ev)
		}
	}
	rows := make([]Row, 0, len(byJob))
	for _, jevs := range byJob {
		rows = append(rows, foldJob(jevs, now))
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(a.SubmittedAt.Compare(b.SubmittedAt), cmp.Compare(a.JobID, b.JobID))
	})
	return rows
}

// foldJob folds one job's events.
func foldJob(evs []events.Event, now time.Time) Row {
	slices.SortStableFunc(evs, func(a, b events.Event) int { return a.Time.Compare(b.Time) })
	r := Row{JobID: evs[0].JobID}
	var shapeNodes, shapeGPUs int
	for _, ev := range evs {
		if r.State.Terminal() {
			break
		}
		st, _ := stateOf(ev.Type)
		r.State = st
		r.Owner = cmp.Or(ev.Owner, r.Owner)
		r.Queue = cmp.Or(ev.Queue, r.Queue)
		r.Attempt = max(r.Attempt, ev.Attempt)
		r.Restarts = max(r.Restarts, ev.Restarts)
		if !ev.SubmittedAt.IsZero() {
			r.SubmittedAt = ev.SubmittedAt
		} else if r.SubmittedAt.IsZero() && (ev.Type == events.Admitted || ev.Type == events.Rejected) {
			r.SubmittedAt = ev.Time
		}
		switch {
		case ev.Type == events.Running:
			r.StartedAt = ev.Time
		case !ev.StartedAt.IsZero():
			r.StartedAt = ev.StartedAt
		}
		if ev.Nodes > 0 {
			shapeNodes, shapeGPUs = ev.Nodes, ev.Nodes*ev.GPUsPerNode
		}
		if ev.Placement != nil {
			r.Nodes, r.GPUs = len(ev.Placement.Nodes), placedGPUs(*ev.Placement)
		}
		if ev.Timing != nil {
			r.Timing = *ev.Timing
		}
		if st.Terminal() {
			r.EndedAt, r.ExitCode, r.Reason = ev.Time, ev.ExitCode, ev.Reason
		} else if ev.Type == events.Requeued {
			r.Reason = ev.Reason
		}
	}
	if r.Nodes == 0 {
		r.Nodes, r.GPUs = shapeNodes, shapeGPUs
	}
	end := r.EndedAt
	if !r.State.Terminal() {
		end = now
	}
	if !r.StartedAt.IsZero() && end.After(r.StartedAt) {
		r.Elapsed = end.Sub(r.StartedAt)
	}
	compute := r.Timing.Compute
	if compute == 0 && r.State == domain.StateRunning {
		// Timing comes with the end (or a requeue); a gang running now has
		// computed for as long as it has run.
		compute = r.Elapsed
	}
	r.GPUHours = float64(r.GPUs) * compute.Hours()
	r.Efficiency = r.Timing.Efficiency()
	return r
}

// placedGPUs counts the GPUs a placement claims.
func placedGPUs(p domain.Placement) int {
	n := 0
	for _, np := range p.Nodes {
		n += len(np.GPUs)
	}
	return n
}
