package arraylimit

import (
	"maps"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestHold(t *testing.T) {
	placed := func(id string, idx int) Task {
		return Task{ID: id, Array: "a", Index: idx, MaxConcurrent: 2, Placed: true}
	}
	cand := func(id string, idx int) Task {
		return Task{ID: id, Array: "a", Index: idx, MaxConcurrent: 2, Candidate: true}
	}
	const full = "array a has 2 of at most 2 tasks placed"
	for _, tc := range []struct {
		name  string
		tasks []Task
		want  map[string]string
	}{
		{"none placed: the two lowest go", []Task{cand("a_5", 5), cand("a_0", 0), cand("a_1", 1)},
			map[string]string{"a_5": "array a has 0 of at most 2 tasks placed"}},
		{"full: every candidate waits", []Task{placed("a_0", 0), placed("a_1", 1), cand("a_2", 2), cand("a_3", 3)},
			map[string]string{"a_2": full, "a_3": full}},
		{"one slot left", []Task{placed("a_0", 0), cand("a_2", 2), cand("a_3", 3)},
			map[string]string{"a_3": "array a has 1 of at most 2 tasks placed"}},
		// A task held by something else (a dependency) is no candidate
		// and takes no slot.
		{"non-candidates take no slot", []Task{{ID: "a_0", Array: "a", Index: 0, MaxConcurrent: 2}, cand("a_1", 1), cand("a_2", 2)},
			map[string]string{}},
		{"no limit", []Task{{ID: "b_0", Array: "b", MaxConcurrent: 0, Candidate: true}}, map[string]string{}},
		{"arrays are counted apart", []Task{placed("a_0", 0), placed("a_1", 1),
			{ID: "b_0", Array: "b", Index: 0, MaxConcurrent: 1, Candidate: true}}, map[string]string{}},
		// More placed than the limit (a limit lowered by hand, a race):
		// nothing more starts, nothing is stopped.
		{"over the limit", []Task{placed("a_0", 0), placed("a_1", 1), placed("a_2", 2), cand("a_3", 3)},
			map[string]string{"a_3": "array a has 3 of at most 2 tasks placed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hold(tc.tasks); !maps.Equal(got, tc.want) {
				t.Errorf("Hold = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTaskOf(t *testing.T) {
	arr := &domain.ArrayTask{JobID: "a", Index: 3, Count: 6, Max: 5, MaxConcurrent: 2}
	for _, tc := range []struct {
		job      domain.Job
		proposed bool
		ok       bool
		placed   bool
	}{
		{domain.Job{ID: "plain", State: domain.StatePending}, false, false, false},
		{domain.Job{ID: "a_3", State: domain.StatePending, Array: &domain.ArrayTask{JobID: "a", Index: 3}}, false, false, false},
		{domain.Job{ID: "a_3", State: domain.StatePending, Array: arr}, false, true, false},
		{domain.Job{ID: "a_3", State: domain.StatePending, Array: arr}, true, true, true},
		{domain.Job{ID: "a_3", State: domain.StateReserved, Array: arr}, false, true, true},
		{domain.Job{ID: "a_3", State: domain.StateRunning, Array: arr}, false, true, true},
	} {
		got, ok := TaskOf(tc.job, tc.proposed)
		if ok != tc.ok || got.Placed != tc.placed || (ok && (got.Array != "a" || got.Index != 3 || got.MaxConcurrent != 2)) {
			t.Errorf("TaskOf(%s %s, %v) = %+v %v", tc.job.ID, tc.job.State, tc.proposed, got, ok)
		}
	}
}
