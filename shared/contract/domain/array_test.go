package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestArrayTasks(t *testing.T) {
	ts := domain.ArrayTasks("sweep", []int{1, 5, 9}, 2)
	if len(ts) != 3 || ts[1].ID() != "sweep_5" || ts[1].Count != 3 || ts[1].Min != 1 || ts[1].Max != 9 || ts[1].Step != 4 || ts[1].MaxConcurrent != 2 {
		t.Errorf("stepped: %+v", ts)
	}
	if ts := domain.ArrayTasks("sweep", []int{0, 1, 3}, 0); ts[2].Step != 0 {
		t.Errorf("not one stepped range, yet step %d", ts[2].Step)
	}
	if domain.ArrayTasks("sweep", nil, 0) != nil {
		t.Error("tasks of no indexes")
	}
}

// An assignment is checked against its own job ID: an array block that
// names another task (someone wrote etcd by hand) is refused, naming the
// field.
func TestAssignmentArrayIsChecked(t *testing.T) {
	a := valid()["Assignment"].(domain.Assignment)
	a.JobID = "sweep_5"
	task := domain.ArrayTasks("sweep", []int{1, 5, 9}, 2)[1]
	a.Array = &task
	data, _ := json.Marshal(a)
	got, err := domain.DecodeAssignment(data)
	if err != nil || got.Array == nil || *got.Array != task {
		t.Fatalf("valid task assignment: %+v %v", got.Array, err)
	}
	for _, tc := range []struct {
		edit func(*domain.ArrayTask)
		want string
	}{
		{func(t *domain.ArrayTask) { t.Index = 9 }, `array: task "sweep_9" of array "sweep" is not job "sweep_5"`},
		{func(t *domain.ArrayTask) { t.JobID = "other" }, "array: task"},
		{func(t *domain.ArrayTask) { t.Count = 0 }, "array.count"},
		{func(t *domain.ArrayTask) { t.Min = 6 }, "array.min"},
		{func(t *domain.ArrayTask) { t.Max = 4 }, "array.max"},
		{func(t *domain.ArrayTask) { t.MaxConcurrent = -1 }, "array.maxConcurrent"},
	} {
		bad := task
		tc.edit(&bad)
		a.Array = &bad
		data, _ := json.Marshal(a)
		if _, err := domain.DecodeAssignment(data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", bad, err, tc.want)
		}
	}
}
