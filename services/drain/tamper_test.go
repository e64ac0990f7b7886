package drain_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/drain"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// startDrainEnv starts the servers, then one drain replica on them
// (startDrain).
func startDrainEnv(t *testing.T) (*testenv.Env, *jobs.Store) {
	t.Helper()
	env := testenv.Start(t)
	return env, startDrain(t, env)
}

// startDrain runs one drain replica on env until the test ends.
func startDrain(t *testing.T, env *testenv.Env) *jobs.Store {
	t.Helper()
	cfg := drain.Config{Base: env.Base(t), CheckInterval: 20 * time.Millisecond}
	testenv.Serve(t, func(ctx context.Context) error { return drain.Run(ctx, cfg) })
	return env.Jobs(t)
}

// requestDrain publishes req on the drain subject (as an operator or
// placement would), with the message ID drain.<job>.
func requestDrain(t *testing.T, env *testenv.Env, req domain.DrainRequest) {
	t.Helper()
	if err := env.Bus.PublishJSON(context.Background(), subjects.Drain, "drain."+req.JobID, req); err != nil {
		t.Fatal(err)
	}
}

// runningGang writes a running job of width nodes × 8 GPUs and its
// allocation's keys (durable, as past the launch barrier), and returns the
// keys.
func runningGang(t *testing.T, env *testenv.Env, js *jobs.Store, id string, width int) []string {
	t.Helper()
	ctx := context.Background()
	spec := testenv.GangSpec(id, width, 8, "true")
	p := testenv.GangPlacement(testenv.GangNodes(id, width), 8, 29500)
	assigns := testenv.GangAssignments(id, p, spec.Command)
	now := time.Now().UTC()
	if err := js.Create(ctx, domain.Job{ID: id, Spec: spec, State: domain.StateRunning, Attempt: 1, Placement: &p, ReservedAt: now, RunningAt: now}); err != nil {
		t.Fatal(err)
	}
	a := domain.Allocation{JobID: id, Attempt: 1, State: domain.AllocRunning, Placement: p, ReservedAt: now}
	ops := store.AllocationPuts(a, assigns)
	if _, err := env.Etcd.Txn(ctx).Then(ops...).Commit(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, op := range ops {
		keys = append(keys, string(op.KeyBytes()))
	}
	return keys
}

// The finding: with alloc/<job> corrupt, cancel failed to release and was
// retried for ever while the gang's 72 claims stayed held. Now the cancel
// releases what the job's keys hold (found by their values) and ends.
func TestCancelReleasesAMalformedAllocation(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx := context.Background()
	keys := runningGang(t, env, js, "corrupt", 9)
	if _, err := env.Etcd.Put(ctx, store.AllocKey("corrupt"), "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	if err := env.Bus.PublishJSON(ctx, subjects.Cancel, "cancel.corrupt", domain.CancelRequest{JobID: "corrupt"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := env.Held(t, keys...); n > 0 {
			return fmt.Errorf("%d of the %d keys still held", n, len(keys))
		}
		return nil
	})
	j, _, err := js.Get(ctx, "corrupt")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != domain.StateCancelled {
		t.Errorf("job is %s, want cancelled", j.State)
	}
}

// drainingGang starts a 2-node gang id and a checkpoint drain of it, and
// returns the gang's keys once the job is draining.
func drainingGang(t *testing.T, env *testenv.Env, js *jobs.Store, id string) []string {
	t.Helper()
	keys := runningGang(t, env, js, id, 2)
	requestDrain(t, env, domain.DrainRequest{JobID: id, Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue})
	testenv.Eventually(t, 30*time.Second, func() error {
		j, _, err := js.Get(context.Background(), id)
		if err != nil || j.Drain == nil {
			return fmt.Errorf("not draining yet (%v)", err)
		}
		return nil
	})
	return keys
}

// drainEnded waits for a drain of job id to end as a requeue that
// released every key, and returns the requeued record.
func drainEnded(t *testing.T, env *testenv.Env, js *jobs.Store, id string, keys []string) domain.Job {
	t.Helper()
	var j domain.Job
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := env.Held(t, keys...); n > 0 {
			return fmt.Errorf("%d of the %d keys still held", n, len(keys))
		}
		var err error
		if j, _, err = js.Get(context.Background(), id); err != nil {
			return err
		}
		if j.State != domain.StatePending || j.Attempt != 2 {
			return fmt.Errorf("job is %s on attempt %d, want requeued", j.State, j.Attempt)
		}
		return nil
	})
	return j
}

// A drain whose allocation record turns out corrupt is ended (releasing
// what the keys hold, the reason naming the key) rather than retried for
// ever.
func TestDrainOfAMalformedAllocationEnds(t *testing.T) {
	env, js := startDrainEnv(t)
	keys := drainingGang(t, env, js, "drained")
	if _, err := env.Etcd.Put(context.Background(), store.AllocKey("drained"), `{"jobId":"drained","attempt":1}`); err != nil {
		t.Fatal(err)
	}
	if j := drainEnded(t, env, js, "drained", keys); !strings.Contains(j.Reason, store.AllocKey("drained")) {
		t.Errorf("reason %q does not name the key", j.Reason)
	}
}

// A record that passes what release relies on but fails the strict
// checks drain's cache applies (an exit code no process has) ended no
// drain: the cache skipped it, the re-read found it, and every pass did
// the same for ever, the grace deadline never judged. It now ends the
// drain as any unreadable record does.
func TestDrainOfAnAllocationTheCacheSkipsEnds(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx := context.Background()
	keys := drainingGang(t, env, js, "odd")
	a, _, _, err := store.GetAllocation(ctx, env.Etcd, "odd")
	if err != nil {
		t.Fatal(err)
	}
	a.Exited = map[string]int{a.Placement.Nodes[0].Node: 300}
	if _, err := env.Etcd.Put(ctx, store.AllocKey("odd"), store.MustJSON(a)); err != nil {
		t.Fatal(err)
	}
	drainEnded(t, env, js, "odd", keys)
}
