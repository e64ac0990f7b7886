package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A 0-5%2 array of 1-GPU jobs on a cluster with room for all six: every
// task runs and succeeds, never more than two placed at once (the
// records, watched throughout, and the ranks themselves, which count
// each other's marker files, both say so), the others pending with
// reason JobArrayTaskLimit meanwhile; each rank sees its own
// SLURM_ARRAY_TASK_ID and the array's variables. Then cancelling a
// second array through its ID cancels every task.
func TestArrayRunsWithinItsLimit(t *testing.T) {
	_, cl := startCluster(t, 2)
	ctx := context.Background()
	out := t.TempDir()
	// Each rank marks itself running, counts the marks (more than two
	// would mean the limit was exceeded), stays a moment so overlaps show,
	// and writes what it saw.
	id, err := cl.Submit(ctx, []byte(fmt.Sprintf(`{"id":"arr","gang":{"nodes":1,"gpusPerNode":1},
		"array":{"indexes":"0-5","maxConcurrent":2},
		"command":["sh","-c","cd %s && touch run-$SLURM_ARRAY_TASK_ID && n=$(ls run-* | wc -l) && sleep 0.5 && rm run-$SLURM_ARRAY_TASK_ID && echo \"$SLURM_ARRAY_TASK_ID $LOCKSTEP_JOB_ID $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $n\" > task-$LOCKSTEP_ARRAY_TASK_ID"]}`, out)))
	if err != nil || id != "arr" {
		t.Fatalf("submit: %s %v", id, err)
	}
	// Watch the records while the array runs.
	var most, limited atomic.Int32
	watch, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watch.Err() == nil {
			tasks, err := cl.ArrayTasks(watch, "arr")
			if err == nil {
				placed := int32(0)
				for _, j := range tasks {
					if j.State.Active() {
						placed++
					}
					if j.State == domain.StatePending && j.Reason == domain.ReasonJobArrayTaskLimit {
						limited.Store(1)
					}
				}
				if placed > most.Load() {
					most.Store(placed)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	for i := range 6 {
		waitState(t, cl, jobspec.TaskID("arr", i), domain.StateSucceeded, 60*time.Second)
	}
	stop()
	<-watched
	if m := most.Load(); m > 2 || m == 0 {
		t.Errorf("at most %d tasks placed at once, want 1 or 2", m)
	}
	if limited.Load() == 0 {
		t.Error("no task was seen pending with reason JobArrayTaskLimit")
	}
	for i := range 6 {
		raw, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("task-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(raw))
		want := []string{fmt.Sprint(i), jobspec.TaskID("arr", i), "arr", "6", "0", "5", "1"}
		if len(f) != 8 || strings.Join(f[:7], " ") != strings.Join(want, " ") {
			t.Errorf("task %d saw %q, want %q and a count", i, raw, want)
			continue
		}
		if f[7] != "1" && f[7] != "2" {
			t.Errorf("task %d ran beside %s marked tasks", i, f[7])
		}
	}

	// A second array, one task at a time: cancelling its ID (every task
	// not ended, as `lockstep cancel` and `scancel` do) ends them all.
	if _, err := cl.Submit(ctx, []byte(`{"id":"arr2","gang":{"nodes":1,"gpusPerNode":1},
		"array":{"indexes":"1-7:2","maxConcurrent":1},"command":["sleep","300"]}`)); err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, "arr2_1", domain.StateRunning, 30*time.Second)
	j := waitState(t, cl, "arr2_3", domain.StatePending, 10*time.Second)
	testenv.Eventually(t, 10*time.Second, func() error {
		if j, err = cl.Job(ctx, "arr2_3"); err != nil || j.Reason != domain.ReasonJobArrayTaskLimit {
			return fmt.Errorf("arr2_3: %s %q %v", j.State, j.Reason, err)
		}
		return nil
	})
	tasks, err := cl.ArrayTasks(ctx, "arr2")
	if err != nil || len(tasks) != 4 {
		t.Fatalf("arr2 tasks: %d %v", len(tasks), err)
	}
	for _, task := range tasks {
		if task.Array.Step != 2 || task.Array.Count != 4 {
			t.Errorf("%s: %+v", task.ID, task.Array)
		}
		if err := cl.Cancel(ctx, task.ID, "array cancelled"); err != nil {
			t.Fatal(err)
		}
	}
	for _, task := range tasks {
		waitState(t, cl, task.ID, domain.StateCancelled, 30*time.Second)
	}
}
