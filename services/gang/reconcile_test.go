package gang_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A reservation is committed before the job record says "reserved". A
// reconciler pass that falls between the two (a replica starting while
// another reserves, as CI once hit) must not take the allocation for an
// orphan: it stays until its launch deadline, and is released after it.
func TestReconcileLeavesAReservationBeingRecorded(t *testing.T) {
	env, js := startGangEnv(t, 0, gang.Config{}) // gang starts once etcd is set up
	ctx := context.Background()
	lease := env.Lease(t, 10*time.Minute)
	start := time.Now()
	clock := &testClock{now: start}
	reserve := func(id string, at time.Time) {
		t.Helper()
		a := domain.Allocation{JobID: id, Attempt: 1, State: domain.AllocReserved, Placement: placementFor(id+"-", 0),
			ReservedAt: at, LaunchDeadline: start.Add(time.Minute)}
		if ok, _, err := store.Reserve(ctx, env.Etcd, a, nil, nil, lease); err != nil || !ok {
			t.Fatalf("reserve %s: ok=%v err=%v", id, ok, err)
		}
	}
	// in-flight: the job is pending on the allocation's attempt.
	spec := testenv.GangSpec("in-flight", nodesPerGang, gpusPerNode, "true")
	if err := js.Create(ctx, domain.Job{ID: spec.ID, Spec: spec, State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	reserve("in-flight", start)
	// orphan: no job at all, reserved longer ago than a read of its record
	// could lag (a fresh one's missing record may be a stale read). Its
	// release shows a reconcile pass has run.
	reserve("orphan", start.Add(-lifecycle.StaleReadWindow-time.Second))

	cfg := gang.Config{ReconcileInterval: 20 * time.Millisecond}
	cfg.Now = clock.Now
	startGang(t, env, 1, cfg)

	held := func(id string) bool { return env.Held(t, store.AllocKey(id)) > 0 }
	footprint := func(id string) bool { return env.Held(t, store.FootprintKey(id)) > 0 }
	testenv.Eventually(t, 30*time.Second, func() error {
		if held("orphan") {
			return errors.New("orphan allocation not released yet")
		}
		return nil
	})
	// Its job's record missing for less than a read can lag, the footprint
	// stays (deleting it is final); past that, it goes.
	time.Sleep(100 * time.Millisecond) // a few passes at 20 ms
	if !footprint("orphan") {
		t.Fatal("the footprint of a job missing for less than StaleReadWindow was deleted")
	}
	clock.advance(lifecycle.StaleReadWindow + time.Second)
	testenv.Eventually(t, 30*time.Second, func() error {
		if footprint("orphan") {
			return errors.New("footprint of a job that does not exist not deleted yet")
		}
		return nil
	})
	if !footprint("in-flight") {
		t.Fatal("the reconciler deleted the footprint of a pending job")
	}
	if !held("in-flight") {
		t.Fatal("the reconciler released a reservation whose job was about to record it")
	}
	clock.advance(2 * time.Minute)
	testenv.Eventually(t, 30*time.Second, func() error {
		if held("in-flight") {
			return errors.New("allocation past its launch deadline not released yet")
		}
		return nil
	})
	j, _, err := js.Get(ctx, "in-flight")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != domain.StatePending || j.Attempt != 1 {
		t.Errorf("job after the release = %s attempt %d, want pending attempt 1 (placed again)", j.State, j.Attempt)
	}
}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
