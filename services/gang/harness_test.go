package gang_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// startGangEnv starts the servers, then `replicas` gang replicas on them
// (startGang); with none, the test starts them itself once it has set up
// what they are to find.
func startGangEnv(t *testing.T, replicas int, cfg gang.Config) (*testenv.Env, *jobs.Store) {
	t.Helper()
	env := testenv.Start(t)
	return env, startGang(t, env, replicas, cfg)
}

// startGang runs `replicas` gang replicas with cfg (its Base filled in
// from env, keeping cfg's clock) on env until the test ends, and returns
// the job records' store.
func startGang(t *testing.T, env *testenv.Env, replicas int, cfg gang.Config) *jobs.Store {
	t.Helper()
	base := env.Base(t)
	base.Now = cfg.Now
	cfg.Base = base
	for range replicas {
		testenv.Serve(t, func(ctx context.Context) error { return gang.Run(ctx, cfg) })
	}
	return env.Jobs(t)
}

// waitConsumed waits until gang's consumer durable has settled n messages
// for good: none pending, none awaiting an ack, none redelivered (refused
// messages are terminated, never redelivered).
func waitConsumed(t *testing.T, env *testenv.Env, durable string, n uint64) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		c, err := env.Bus.JS.Consumer(context.Background(), subjects.StreamWork, durable)
		if err != nil {
			return err
		}
		info, err := c.Info(context.Background())
		if err != nil {
			return err
		}
		if info.Delivered.Consumer < n || info.NumPending > 0 || info.NumAckPending > 0 {
			return fmt.Errorf("%s: %d delivered, %d pending, %d awaiting ack", durable, info.Delivered.Consumer, info.NumPending, info.NumAckPending)
		}
		if info.NumRedelivered > 0 || info.Delivered.Consumer > n {
			t.Fatalf("%s: refused messages were redelivered: %+v", durable, info)
		}
		return nil
	})
}

// reservedGang commits, as a gang replica would, the reservation of attempt
// 1 of job id on width nodes of 2 GPUs and 2 ranks each (registered under
// a lease that outlives the test, so they stay up: the reconciler requeues
// gangs on nodes that are down), under a reservation lease of its own, and
// writes the job record in state. It returns the allocation and its lease.
func reservedGang(t *testing.T, env *testenv.Env, js *jobs.Store, id string, width, port int, state domain.State) (domain.Allocation, clientv3.LeaseID) {
	t.Helper()
	ctx := context.Background()
	nodeLease, lease := env.Lease(t, 10*time.Minute), env.Lease(t, 10*time.Minute)
	nodes := testenv.GangNodes(id, width)
	revs := env.RegisterNodes(t, nodeLease, 2, nodes...)
	p := testenv.GangPlacement(nodes, 2, port)
	spec := testenv.GangSpec(id, width, 2, "sleep", "1")
	now := time.Now().UTC()
	// In the order a replica works: the record exists pending, the
	// reservation commits, then the record says so. A reconciler pass in
	// between leaves a pending job's reservation alone; it would requeue a
	// reserved record whose allocation is not written yet.
	job := domain.Job{ID: id, Spec: spec, State: domain.StatePending, Attempt: 1, PendingSince: now}
	if err := js.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	a := domain.Allocation{JobID: id, Attempt: 1, State: domain.AllocReserved, Placement: p,
		Lease: int64(lease), ReservedAt: now, LaunchDeadline: now.Add(time.Minute)}
	if ok, _, err := store.Reserve(ctx, env.Etcd, a, testenv.GangAssignments(id, p, spec.Command), revs, lease); err != nil || !ok {
		t.Fatalf("reserve %s: ok=%v err=%v", id, ok, err)
	}
	if state != domain.StatePending {
		_, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) {
			j.State, j.Placement, j.ReservedAt = state, &p, now
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return a, lease
}

// allocationKeys are the keys store.AllocationDeletes removes for a.
func allocationKeys(a domain.Allocation) []string {
	var keys []string
	for _, op := range store.AllocationDeletes(a) {
		keys = append(keys, string(op.KeyBytes()))
	}
	return keys
}

// values reads the keys that exist.
func values(t *testing.T, cli *clientv3.Client, keys []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		resp, err := cli.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			out[k] = string(kv.Value)
		}
	}
	return out
}

// waitState waits until job id's record is in state want.
func waitState(t *testing.T, js *jobs.Store, id string, want domain.State) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		j, _, err := js.Get(context.Background(), id)
		if err != nil {
			return err
		}
		if j.State != want {
			return fmt.Errorf("job %s is %s, want %s", id, j.State, want)
		}
		return nil
	})
}
