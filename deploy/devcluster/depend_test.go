package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A chain A → B (afterok A) → C (afternotok A): B and C wait with reason
// Dependency while A runs; B runs once A has succeeded (it checks a file
// A writes just before it exits); C ends DependencyNeverSatisfied, as
// does D, which names a job that does not exist, once the placement's
// grace for records still to come (30 s) is over.
func TestDependencyChain(t *testing.T) {
	_, cl := startCluster(t, 4)
	ctx := context.Background()
	dir := t.TempDir()
	gate, done := filepath.Join(dir, "gate"), filepath.Join(dir, "a-done")
	submit := func(spec string) string {
		t.Helper()
		id, err := cl.Submit(ctx, []byte(spec))
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return id
	}
	a := submit(fmt.Sprintf(`{"id":"dep-a","gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":1},
		"command":["sh","-c","while [ ! -f %s ]; do sleep 0.05; done; touch %s"]}`, gate, done))
	b := submit(fmt.Sprintf(`{"id":"dep-b","gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":1},
		"command":["test","-f",%q],"dependencies":[{"type":"afterok","jobs":["dep-a"]}]}`, done))
	c := submit(`{"id":"dep-c","gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":1},"command":["true"],
		"dependencies":[{"type":"afternotok","jobs":["dep-a"]}]}`)
	d := submit(`{"id":"dep-d","gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":1},"command":["true"],
		"dependencies":[{"type":"afterany","jobs":["dep-ghost"]}]}`)

	waitState(t, cl, a, domain.StateRunning, 30*time.Second)
	for id, detail := range map[string]string{b: "waiting for afterok:dep-a", c: "waiting for afternotok:dep-a"} {
		testenv.Eventually(t, 10*time.Second, func() error {
			j, err := cl.Job(ctx, id)
			if err != nil {
				return err
			}
			if j.State != domain.StatePending || j.Reason != domain.ReasonDependency || j.Detail != detail {
				return fmt.Errorf("job %s is %s (%q, %q), want pending (Dependency, %q)", id, j.State, j.Reason, j.Detail, detail)
			}
			return nil
		})
	}
	if j, err := cl.Job(ctx, d); err != nil || j.State != domain.StatePending {
		t.Errorf("dep-d, within the grace: %s (%q, %q), %v", j.State, j.Reason, j.Detail, err)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, a, domain.StateSucceeded, 30*time.Second)
	waitState(t, cl, b, domain.StateSucceeded, 30*time.Second)
	j := waitState(t, cl, c, domain.StateCancelled, 30*time.Second)
	if want := "DependencyNeverSatisfied: afternotok on dep-a, which ended succeeded"; j.Reason != want {
		t.Errorf("dep-c: reason %q, want %q", j.Reason, want)
	}
	if j.RunningAt != (time.Time{}) || j.Placement != nil {
		t.Errorf("dep-c ran: %+v", j)
	}
	if j := waitState(t, cl, d, domain.StateCancelled, 60*time.Second); j.Reason != "DependencyNeverSatisfied: afterany on dep-ghost: no such job" {
		t.Errorf("dep-d: reason %q", j.Reason)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		evs, err := cl.Events(ctx, c)
		if err != nil {
			return err
		}
		if got := typesOf(evs); got != "admitted,cancelled" {
			return fmt.Errorf("dep-c events %s", got)
		}
		if last := evs[len(evs)-1]; last.Actor != events.SystemActor("placement") || !strings.HasPrefix(last.Reason, domain.ReasonDependencyNeverSatisfied) {
			return fmt.Errorf("dep-c cancelled event %+v", last)
		}
		return nil
	})
}
