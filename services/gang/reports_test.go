package gang_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// All ranks of a wide gang report at once, to two gang replicas, each
// report published twice (a redelivery). The reports of one gang are
// batched and applied with compare-and-set on one allocation key, from
// memory that the other replica's writes make stale; none may be lost or
// applied twice. The launch barrier must detach every key of the
// allocation from the reservation lease without changing its value: once
// running, the gang survives the lease. When every rank exited the job
// succeeded and every key is gone.
func TestConcurrentReportsPassBarrierAndFinish(t *testing.T) {
	env, js := startGangEnv(t, 2, gang.Config{Workers: 4})
	ctx := context.Background()

	const width = 8
	// The nodes stay up throughout (the reconciler requeues gangs on nodes
	// that are down).
	for g := range 3 {
		id := fmt.Sprintf("wide-%d", g)
		a, lease := reservedGang(t, env, js, id, width, 29500+g, domain.StateReserved)
		p := a.Placement
		keys := allocationKeys(a)
		before := values(t, env.Etcd, keys)

		publishAll(t, env, id, p, domain.ReportStarted)
		waitState(t, js, id, domain.StateRunning)
		// Past the barrier: the keys outlive the reservation lease, unchanged.
		if _, err := env.Etcd.Revoke(ctx, lease); err != nil {
			t.Fatal(err)
		}
		after := values(t, env.Etcd, keys)
		for _, k := range keys {
			if k == store.AllocKey(id) {
				continue // rewritten: state running, every node started
			}
			if after[k] != before[k] {
				t.Fatalf("%s after the barrier = %q, want %q (kept)", k, after[k], before[k])
			}
		}
		got, _, found, err := store.GetAllocation(ctx, env.Etcd, id)
		if err != nil || !found || got.State != domain.AllocRunning || !got.AllStarted() {
			t.Fatalf("allocation after the barrier: %+v found=%v err=%v", got, found, err)
		}

		publishAll(t, env, id, p, domain.ReportExited)
		waitState(t, js, id, domain.StateSucceeded)
		testenv.Eventually(t, 30*time.Second, func() error {
			if left := values(t, env.Etcd, keys); len(left) > 0 {
				return fmt.Errorf("%d keys of the allocation left after success", len(left))
			}
			return nil
		})
	}
}

// publishAll sends one report per node, all at once, each twice.
func publishAll(t *testing.T, env *testenv.Env, id string, p domain.Placement, kind domain.ReportKind) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(p.Nodes))
	for round := range 2 {
		for _, np := range p.Nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := domain.Report{JobID: id, Attempt: 1, Node: np.Node, Kind: kind}
				// Distinct IDs: the second is a redelivery JetStream does not drop.
				msgID := fmt.Sprintf("test.%s.%s.%s.%d", id, np.Node, kind, round)
				errs <- env.Bus.PublishJSON(context.Background(), subjects.ReportFrom(np.Node), msgID, r)
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The finding: a forged "exited" report ended a victim's gang as
// succeeded. A node reports now on its own subject (with auth, the server
// lets only that node publish there), and gang refuses a report that names
// another node than the subject it came on, or a node that holds no part
// of the attempt: neither changes the allocation or the job, and both are
// terminated, not redelivered. The victim's own node still reports.
func TestReportsAreRefusedForAnotherNode(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2})
	ctx := context.Background()
	a, _ := reservedGang(t, env, js, "victim", 1, 29500, domain.StateReserved)
	own := a.Placement.Nodes[0].Node

	forged := []struct {
		subject string
		r       domain.Report
	}{
		// evil's agent claims to speak for the victim's node.
		{subjects.ReportFrom("evil"), domain.Report{JobID: "victim", Attempt: 1, Node: own, Kind: domain.ReportFailed, ExitCode: 1}},
		// evil reports for itself on a gang it holds no part of.
		{subjects.ReportFrom("evil"), domain.Report{JobID: "victim", Attempt: 1, Node: "evil", Kind: domain.ReportFailed, ExitCode: 1}},
		// The subject of old, which no node has any more.
		{subjects.Report, domain.Report{JobID: "victim", Attempt: 1, Node: own, Kind: domain.ReportFailed, ExitCode: 1}},
	}
	for i, f := range forged {
		if err := env.Bus.PublishJSON(ctx, f.subject, fmt.Sprintf("forged.%d", i), f.r); err != nil {
			t.Fatal(err)
		}
	}
	waitConsumed(t, env, subjects.DurableReports, 2) // the bare subject is not gang's to consume
	got, _, found, err := store.GetAllocation(ctx, env.Etcd, "victim")
	if err != nil || !found || got.State != domain.AllocReserved || len(got.Started) > 0 || len(got.Exited) > 0 {
		t.Fatalf("allocation after forged reports: %+v found=%v err=%v", got, found, err)
	}
	if j, _, err := js.Get(ctx, "victim"); err != nil || j.State != domain.StateReserved {
		t.Fatalf("job after forged reports: %s (%s) %v", j.State, j.Reason, err)
	}

	r := domain.Report{JobID: "victim", Attempt: 1, Node: own, Kind: domain.ReportStarted}
	if err := env.Bus.PublishJSON(ctx, subjects.ReportFrom(own), "own.started", r); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, "victim", domain.StateRunning)
}

// The ranks of a gang can start, and pass the launch barrier on one gang
// replica, before the replica that reserved them has recorded the
// reservation on the job. The job must still end up "running" once the
// reservation is recorded, not stay "reserved" with its gang running.
func TestGangStartedBeforeItsReservationWasRecorded(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2})
	ctx := context.Background()

	const id = "early"
	// The reservation is committed in etcd, but the job record still says
	// pending: the reserving replica has not got to it yet.
	a, _ := reservedGang(t, env, js, id, 1, 29600, domain.StatePending)
	p := a.Placement
	now := a.ReservedAt

	publishAll(t, env, id, p, domain.ReportStarted)
	testenv.Eventually(t, 30*time.Second, func() error {
		got, _, found, err := store.GetAllocation(ctx, env.Etcd, id)
		if err != nil || !found || got.State != domain.AllocRunning {
			return fmt.Errorf("allocation not past the barrier yet: %+v found=%v err=%v", got.State, found, err)
		}
		return nil
	})
	// Now the reserving replica records the reservation.
	if _, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) { return j.Reserve(1, p, now), nil }); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, id, domain.StateRunning)
}

// A gang that ends takes its footprint with it: the record is final by the
// time the allocation is released, so no reservation can need the footprint
// again, and the release deletes it in the same transaction instead of
// leaving a list, a read of the record and a delete to the reconciler. The
// reconciler here never runs a second pass: the footprint must be gone
// without it, and must stay while the gang runs.
func TestAFinishedGangTakesItsFootprint(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2, ReconcileInterval: time.Hour})
	footprint := func(id string) bool { return env.Held(t, store.FootprintKey(id)) > 0 }
	for _, end := range []struct {
		id    string
		code  int
		state domain.State
	}{{"ends-well", 0, domain.StateSucceeded}, {"ends-badly", 3, domain.StateFailed}} {
		a, _ := reservedGang(t, env, js, end.id, 2, 29500, domain.StateReserved)
		publishAll(t, env, end.id, a.Placement, domain.ReportStarted)
		waitState(t, js, end.id, domain.StateRunning)
		if !footprint(end.id) {
			t.Fatalf("%s: the footprint of a running gang is gone", end.id)
		}
		for _, np := range a.Placement.Nodes {
			r := domain.Report{JobID: end.id, Attempt: 1, Node: np.Node, Kind: domain.ReportExited, ExitCode: end.code}
			if err := env.Bus.PublishJSON(t.Context(), subjects.ReportFrom(np.Node), "", r); err != nil {
				t.Fatal(err)
			}
		}
		waitState(t, js, end.id, end.state)
		testenv.Eventually(t, 30*time.Second, func() error {
			if left := values(t, env.Etcd, allocationKeys(a)); len(left) > 0 {
				return fmt.Errorf("%s: %d keys of the allocation left", end.id, len(left))
			}
			return nil
		})
		if footprint(end.id) {
			t.Errorf("%s: the footprint outlived the %s gang's release", end.id, end.state)
		}
	}
}
