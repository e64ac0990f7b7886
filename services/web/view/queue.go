package view

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// QueueInput is what the queue page is built from.
type QueueInput struct {
	Jobs   []domain.Job
	Policy queue.Config
	Now    time.Time
}

// Queue is the queue page: pending jobs in the order the policy considers
// them, then the jobs holding GPUs.
type Queue struct {
	Pending []PendingRow
	Running []RunningRow
	// PendingGPUs and RunningGPUs are the GPUs asked for and held.
	PendingGPUs, RunningGPUs int
}

// PendingRow is one pending job.
type PendingRow struct {
	Pos                    int
	ID, Name, Owner, Queue string
	Priority               int
	Shape                  string
	GPUs                   int
	Reason, Detail         string
	Waited                 string
	// SwitchWait is the longest the job may still wait for fewer switches
	// (its topology.waitForSwitches less its time pending), "" when it
	// asked for no switch bound. Placement starts the wait's clock when
	// it first finds a placement on too many switches, so the time left
	// may be longer than this bound says only until then.
	SwitchWait string
	Color      string
}

// RunningRow is one job holding GPUs.
type RunningRow struct {
	ID, Name, Owner, Queue string
	State                  domain.State
	Shape                  string
	GPUs                   int
	Elapsed                string
	Leaves                 string
	Color                  string
	// startedAt orders the rows: longest running first.
	startedAt time.Time
}

// BuildQueue orders the pending jobs with the queue policy's order
// (queue.Order: priority, fair share, size handicap, submission) and
// lists the reserved and running ones, longest running first. Fair-share
// usage is placement's own record, which the web service does not keep,
// so queues are ranked as if none had recent use.
func BuildQueue(in QueueInput) Queue {
	byID := make(map[string]domain.Job, len(in.Jobs))
	var pending []queue.PendingJob
	var q Queue
	for _, j := range in.Jobs {
		switch {
		case j.State == domain.StatePending:
			byID[j.ID] = j
			pending = append(pending, queue.PendingJob{
				ID: j.ID, Queue: j.Spec.Queue, Owner: j.Owner, Priority: j.Spec.Priority, SubmittedAt: j.SubmittedAt,
				TimeLimit: j.Spec.TimeLimit.Duration(), Request: place.RequestForJob(j),
			})
		case j.State.Active():
			q.Running = append(q.Running, runningRow(j, in.Now))
			q.RunningGPUs += j.Spec.GPUs()
		}
	}
	for i, pj := range queue.Order(queue.Input{Pending: pending, Config: in.Policy, Now: in.Now}) {
		j := byID[pj.ID]
		q.Pending = append(q.Pending, pendingRow(i+1, j, in.Now))
		q.PendingGPUs += j.Spec.GPUs()
	}
	slices.SortFunc(q.Running, func(a, b RunningRow) int {
		return cmp.Or(a.startedAt.Compare(b.startedAt), cmp.Compare(a.ID, b.ID))
	})
	return q
}

// shapeOf is the gang's shape, nodes × GPUs per node.
func shapeOf(j domain.Job) string {
	return fmt.Sprintf("%d×%d", j.Spec.Gang.Nodes, j.Spec.Gang.GPUsPerNode)
}

func pendingRow(pos int, j domain.Job, now time.Time) PendingRow {
	since := cmp.Or(j.PendingSince, j.SubmittedAt)
	r := PendingRow{
		Pos: pos, ID: j.ID, Name: j.Spec.Name, Owner: j.Owner, Queue: j.Spec.Queue, Priority: j.Spec.Priority,
		Shape: shapeOf(j), GPUs: j.Spec.GPUs(), Reason: cmp.Or(j.Reason, "(not yet considered)"), Detail: j.Detail,
		Waited: Age(now.Sub(since)), Color: JobColor(j.ID),
	}
	if t := j.Spec.Topology; t.MaxSwitches > 0 {
		left := t.WaitForSwitches.Duration() - now.Sub(since)
		r.SwitchWait = "≤ " + Age(left) + " of " + Age(t.WaitForSwitches.Duration())
	}
	return r
}

func runningRow(j domain.Job, now time.Time) RunningRow {
	r := RunningRow{
		ID: j.ID, Name: j.Spec.Name, Owner: j.Owner, Queue: j.Spec.Queue, State: j.State,
		Shape: shapeOf(j), GPUs: j.Spec.GPUs(), Color: JobColor(j.ID), startedAt: cmp.Or(j.RunningAt, j.ReservedAt),
	}
	if !r.startedAt.IsZero() {
		r.Elapsed = Age(now.Sub(r.startedAt))
	}
	if j.Placement != nil {
		r.Leaves = strings.Join(j.Placement.Leaves, ", ")
	}
	return r
}
