package gang_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/jobspec"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/testenv"
)

// The ranks of a gang can start, and pass the launch barrier on one gang
// replica, before the replica that reserved them has recorded the
// reservation on the job. The job must still end up "running" once the
// reservation is recorded, not stay "reserved" with its gang running.
func TestGangStartedBeforeItsReservationWasRecorded(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	js := startGang(t, env, 1, gang.Config{Workers: 2})

	const id = "early"
	nodeLease, err := env.Etcd.Grant(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := env.Etcd.Grant(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	node := domain.Node{Name: "early-n0", Addr: "early-n0", GPUs: 1, Epoch: int64(nodeLease.ID)}
	put, err := env.Etcd.Put(ctx, store.NodeKey(node.Name), store.MustJSON(node), clientv3.WithLease(nodeLease.ID))
	if err != nil {
		t.Fatal(err)
	}
	p := domain.Placement{MasterAddr: node.Name, MasterPort: 29600, Nodes: []domain.NodePlacement{
		{Node: node.Name, GPUs: []int{0}, Ranks: []domain.Rank{{GPUs: []int{0}}}}}}
	spec := jobspec.Spec{ID: id, Queue: "default", Command: []string{"sleep", "1"},
		Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1}}
	now := time.Now().UTC()
	// The reservation is committed in etcd, but the job record still says
	// pending: the reserving replica has not got to it yet.
	if err := js.Create(ctx, domain.Job{ID: id, Spec: spec, State: domain.StatePending, Attempt: 1, PendingSince: now}); err != nil {
		t.Fatal(err)
	}
	a := domain.Allocation{JobID: id, Attempt: 1, State: domain.AllocReserved, Placement: p,
		Lease: int64(lease.ID), ReservedAt: now, LaunchDeadline: now.Add(time.Minute)}
	as := []domain.Assignment{{JobID: id, Attempt: 1, Node: node.Name, NNodes: 1, WorldSize: 1,
		MasterAddr: p.MasterAddr, MasterPort: p.MasterPort, Ranks: p.Nodes[0].Ranks, Command: spec.Command}}
	if ok, _, err := store.Reserve(ctx, env.Etcd, a, as, map[string]int64{node.Name: put.Header.Revision}, lease.ID); err != nil || !ok {
		t.Fatalf("reserve: ok=%v err=%v", ok, err)
	}

	publishAll(t, env, id, p, domain.ReportStarted)
	testenv.Eventually(t, 30*time.Second, func() error {
		got, _, found, err := store.GetAllocation(ctx, env.Etcd, id)
		if err != nil || !found || got.State != domain.AllocRunning {
			return errorf("allocation not past the barrier yet: %+v found=%v err=%v", got.State, found, err)
		}
		return nil
	})
	// Now the reserving replica records the reservation.
	if _, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) { return j.Reserve(1, p, now), nil }); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, id, domain.StateRunning)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
