package arraylimit

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Task is what the decision needs of one unfinished task of an array.
type Task struct {
	ID    string
	Array string
	Index int
	// MaxConcurrent is the array's limit; 0: none.
	MaxConcurrent int
	// Placed: the task holds (or is being given) GPUs: reserved, running,
	// or pending with a proposal in flight.
	Placed bool
	// Candidate: the task is pending and nothing else holds it back, so
	// the queue would consider it.
	Candidate bool
}

// TaskOf is what the decision needs of a job record; ok is false for a
// job that is no array task or whose array has no limit.
func TaskOf(j domain.Job, proposed bool) (Task, bool) {
	if j.Array == nil || j.Array.MaxConcurrent <= 0 {
		return Task{}, false
	}
	return Task{
		ID: j.ID, Array: j.Array.JobID, Index: j.Array.Index, MaxConcurrent: j.Array.MaxConcurrent,
		Placed: j.State.Active() || (j.State == domain.StatePending && proposed),
	}, true
}

// Hold answers which candidates must wait, by ID, with the detail to
// show: per array, the free slots (the limit less the tasks placed) go
// to the candidates of lowest index, as Slurm starts an array's tasks in
// index order; the others wait. A candidate given a slot may still wait
// for resources; it keeps the slot, so the limit is never exceeded.
func Hold(tasks []Task) map[string]string {
	byArray := map[string][]Task{}
	for _, t := range tasks {
		if t.MaxConcurrent > 0 {
			byArray[t.Array] = append(byArray[t.Array], t)
		}
	}
	held := map[string]string{}
	for array, ts := range byArray {
		placed, limit := 0, 0
		var cands []Task
		for _, t := range ts {
			limit = max(limit, t.MaxConcurrent)
			switch {
			case t.Placed:
				placed++
			case t.Candidate:
				cands = append(cands, t)
			}
		}
		slices.SortFunc(cands, func(a, b Task) int { return cmp.Compare(a.Index, b.Index) })
		free := max(limit-placed, 0)
		for i, t := range cands {
			if i >= free {
				held[t.ID] = fmt.Sprintf("array %s has %d of at most %d tasks placed", array, placed, limit)
			}
		}
	}
	return held
}
