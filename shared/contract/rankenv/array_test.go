package rankenv

import (
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestArrayList(t *testing.T) {
	if ArrayList(nil) != nil {
		t.Error("a plain job gets array variables")
	}
	task := domain.ArrayTask{JobID: "sweep", Index: 5, Count: 3, Min: 1, Max: 9, Step: 4}
	want := []string{"LOCKSTEP_ARRAY_JOB_ID=sweep", "LOCKSTEP_ARRAY_TASK_ID=5", "SLURM_ARRAY_JOB_ID=sweep", "SLURM_ARRAY_TASK_ID=5",
		"SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=9", "SLURM_ARRAY_TASK_STEP=4"}
	if got := ArrayList(&task); !slices.Equal(got, want) {
		t.Errorf("ArrayList = %v", got)
	}
	task.Step = 0 // not one stepped range: Slurm leaves the step unset
	if got := ArrayList(&task); len(got) != len(want)-1 || slices.ContainsFunc(got, func(s string) bool { return s[:len(SlurmArrayStep)] == SlurmArrayStep }) {
		t.Errorf("ArrayList without a step = %v", got)
	}
	for _, v := range arrayVars {
		if !slices.Contains(Vars, v) {
			t.Errorf("%s is not in Vars (docs/interface.md)", v.Name)
		}
	}
}
