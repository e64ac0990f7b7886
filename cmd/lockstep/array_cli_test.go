package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// An array's ID, which has no record, names every task of it: `lockstep
// cancel` asks for each one not ended, `scancel` too; a task ID names one.
func TestCancelAnArrayByItsID(t *testing.T) {
	url := startDevCluster(t)
	for _, id := range []string{"arr", "arr2"} {
		spec := writeFile(t, id+".json", `{"id":"`+id+`","gang":{"nodes":1,"gpusPerNode":8},"array":{"indexes":"0-2"},"command":["sleep","300"]}`)
		mustSubmit(t, url, spec)
	}
	ctx := context.Background()
	b, err := bus.Connect(ctx, url, "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(ctx, b, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	states := func(array string) string {
		tasks, err := c.ArrayTasks(ctx, array)
		if err != nil {
			return err.Error()
		}
		var out []string
		for _, j := range tasks {
			out = append(out, j.ID+":"+string(j.State))
		}
		return strings.Join(out, " ")
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if s := states("arr2"); strings.Count(s, ":") != 3 {
			return fmt.Errorf("arr2 tasks: %s", s)
		}
		return nil
	})
	// describe shows one job: an array's ID says which to describe.
	if _, errOut, code := cli(t, "describe", "arr2", "--nats", url); code == 0 || !strings.Contains(errOut, "arr2 is an array of 3 tasks (arr2_0 … arr2_2)") {
		t.Errorf("describe of an array: exit %d, %q", code, errOut)
	}
	// One task by its ID, then the rest by the array's.
	if _, errOut, code := cli(t, "scancel", "arr2_1", "--nats", url); code != 0 {
		t.Fatal(errOut)
	}
	waitCLIState(t, c, "arr2_1", domain.StateCancelled)
	if _, errOut, code := cli(t, "scancel", "arr2", "--nats", url); code != 0 {
		t.Fatalf("scancel of an array with an ended task: %s", errOut)
	}
	out, errOut, code := cli(t, "cancel", "arr", "--nats", url)
	if code != 0 || strings.Count(out, "cancel requested for arr_") != 3 {
		t.Fatalf("cancel arr = %d %q %q", code, out, errOut)
	}
	for _, id := range []string{"arr_0", "arr_1", "arr_2", "arr2_0", "arr2_2"} {
		waitCLIState(t, c, id, domain.StateCancelled)
	}
}

func waitCLIState(t *testing.T, c *client.Client, id string, want domain.State) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		j, err := c.Job(context.Background(), id)
		if err != nil || j.State != want {
			return fmt.Errorf("%s: %s %v", id, j.State, err)
		}
		return nil
	})
}

// submit --wait of an array waits for its tasks (the array's own ID gets
// no record once admitted), shows each end, and exits 1 unless all of
// them succeeded.
func TestSubmitWaitForAnArray(t *testing.T) {
	url := startDevCluster(t)
	for _, tc := range []struct {
		id, command string
		code        int
		want        string
	}{
		{"wait-ok", "true", 0, "succeeded  wait-ok_1"},
		{"wait-bad", "false", 1, "array wait-bad: 2 of 2 tasks did not succeed"},
	} {
		spec := writeFile(t, tc.id+".json", `{"id":"`+tc.id+`","gang":{"nodes":1,"gpusPerNode":1},"array":{"indexes":"0-1"},"command":["`+tc.command+`"]}`)
		out, errOut, code := cli(t, "submit", spec, "--wait", "--nats", url)
		if code != tc.code || strings.TrimSpace(out) != tc.id || !strings.Contains(errOut, tc.want) {
			t.Errorf("submit --wait of array %s: exit %d, out %q, err:\n%s\nwant exit %d and %q", tc.id, code, out, errOut, tc.code, tc.want)
		}
	}
	// The array's ID names its tasks in sacct -j and scontrol show job, as
	// in Slurm; describe, which shows one job, says which to name.
	out, errOut, code := cli(t, "sacct", "-j", "wait-ok", "-n", "-o", "JobID", "--nats", url)
	if ids := strings.Fields(out); code != 0 || strings.Join(ids, " ") != "wait-ok_0 wait-ok_1" {
		t.Errorf("sacct -j wait-ok: exit %d, %q %s", code, out, errOut)
	}
	if out, errOut, code := cli(t, "scontrol", "show", "job", "wait-ok", "--nats", url); code != 0 || strings.Count(out, "JobId=") != 2 {
		t.Errorf("scontrol show job wait-ok: exit %d, %q %s", code, out, errOut)
	}
	if _, errOut, code := cli(t, "describe", "wait-ok", "--nats", url); code != 1 || !strings.Contains(errOut, "wait-ok is an array of 2 tasks (wait-ok_0 … wait-ok_1)") {
		t.Errorf("describe wait-ok: exit %d, %s", code, errOut)
	}
}
