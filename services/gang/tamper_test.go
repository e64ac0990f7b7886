package gang_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The finding: deleting alloc/<job> of a running job got it requeued,
// but the release went through the missing record, so attempt 1's
// assignments (and claims) stayed: its agents kept its ranks running
// while attempt 2 started elsewhere. Now the attempt is released by
// sweeping its keys before the job moves on: whenever the record says
// attempt 2, no assignment of attempt 1 is left for an agent to run.
func TestDeletedAllocationStopsTheAttemptBeforeTheNext(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{ReconcileInterval: 20 * time.Millisecond})
	ctx := context.Background()
	a, _ := reservedGang(t, env, js, "victim", 3, 29610, domain.StateRunning)
	keys := allocationKeys(a)
	if _, err := env.Etcd.Delete(ctx, store.AllocKey("victim")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		// The record first: whatever it says was written after the
		// release it depends on.
		j, _, err := js.Get(ctx, "victim")
		if err != nil {
			return err
		}
		left := values(t, env.Etcd, keys)
		if j.Attempt > 1 && len(left) > 0 {
			t.Fatalf("job is on attempt %d while attempt 1 still holds %d keys: %v", j.Attempt, len(left), left)
		}
		if j.Attempt == 1 {
			return fmt.Errorf("job still on attempt 1 (%s)", j.State)
		}
		if !strings.Contains(j.Reason, "allocation record of the running gang is gone") {
			t.Errorf("requeue reason %q does not say why", j.Reason)
		}
		return nil
	})
}

// The finding: a corrupt alloc/<job> made every release fail and retry for
// ever, holding the gang's claims. Now the record is named (the requeue
// reason, a log line and a counter) and everything of the attempt its
// keys name is released; the job is requeued.
func TestMalformedAllocationIsReleased(t *testing.T) {
	for name, corrupt := range map[string]func(a domain.Allocation) string{
		"undecodable": func(domain.Allocation) string { return `{"jobId": "corrupt", "placement": 7` },
		// A record that names another job would release that job's keys.
		"names another job": func(a domain.Allocation) string { a.JobID = "bystander"; return store.MustJSON(a) },
		"no nodes":          func(a domain.Allocation) string { a.Placement.Nodes = nil; return store.MustJSON(a) },
	} {
		t.Run(name, func(t *testing.T) {
			env, js := startGangEnv(t, 1, gang.Config{ReconcileInterval: 20 * time.Millisecond})
			ctx := context.Background()
			a, _ := reservedGang(t, env, js, "corrupt", 9, 29620, domain.StateRunning)
			keys := allocationKeys(a)
			if _, err := env.Etcd.Put(ctx, store.AllocKey("corrupt"), corrupt(a)); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 30*time.Second, func() error {
				if left := values(t, env.Etcd, keys); len(left) > 0 {
					return fmt.Errorf("%d keys of the corrupt allocation left", len(left))
				}
				return nil
			})
			// The keys go first, then the job is requeued: wait for both.
			testenv.Eventually(t, 30*time.Second, func() error {
				j, _, err := js.Get(ctx, "corrupt")
				if err != nil {
					return err
				}
				if j.Attempt != 2 || j.State != domain.StatePending || !strings.Contains(j.Reason, store.AllocKey("corrupt")) {
					return fmt.Errorf("job after the release: attempt %d %s %q, want attempt 2 pending with a reason naming the key", j.Attempt, j.State, j.Reason)
				}
				return nil
			})
		})
	}
}
