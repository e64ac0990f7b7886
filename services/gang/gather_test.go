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
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The nodes of a gang report a few milliseconds apart. Gang gathers them
// before writing: the starts pass the launch barrier in one write and the
// clean exits end the gang with none, where one write per arrival would
// record each node's start or exit first. Counted on etcd's own history of
// the allocation key.
func TestAGangsReportsAreGatheredIntoOneWrite(t *testing.T) {
	// A gathering far longer than the spread, so that a slow machine's
	// publishes still land within it; it ends at the barrier anyway.
	env, js := startGangEnv(t, 1, gang.Config{Workers: 8, ReportGather: time.Second})
	ctx := context.Background()
	const width = 3
	a, _ := reservedGang(t, env, js, "spread", width, 29500, domain.StateReserved)
	key := store.AllocKey("spread")
	report := func(node string, kind domain.ReportKind) {
		t.Helper()
		r := domain.Report{JobID: "spread", Attempt: 1, Node: node, Kind: kind}
		if err := env.Bus.PublishJSON(ctx, subjects.ReportFrom(node), "", r); err != nil {
			t.Fatal(err)
		}
	}
	nodes := a.Placement.NodeNames()
	// The first report reads the allocation (gang did not reserve it here);
	// once remembered, the others are gathered.
	report(nodes[0], domain.ReportStarted)
	waitStartRecorded(t, env, "spread", nodes[0])
	afterFirst := modRevision(t, env, key)
	for _, n := range nodes[1:] {
		report(n, domain.ReportStarted)
		time.Sleep(3 * time.Millisecond)
	}
	waitState(t, js, "spread", domain.StateRunning)
	running := modRevision(t, env, key)
	for _, n := range nodes {
		report(n, domain.ReportExited)
		time.Sleep(3 * time.Millisecond)
	}
	waitState(t, js, "spread", domain.StateSucceeded)
	testenv.Eventually(t, 30*time.Second, func() error {
		if env.Held(t, key) > 0 {
			return fmt.Errorf("allocation not released yet")
		}
		return nil
	})
	if n := putsBetween(t, env, key, afterFirst, running); n != 1 {
		t.Errorf("the other starts were written %d times, want once (the launch barrier)", n)
	}
	if n := putsBetween(t, env, key, running, 0); n != 0 {
		t.Errorf("the exits were written %d times before the release, want none", n)
	}
}

// A report whose gang's other nodes stay silent is still recorded, once
// the gathering gives up on them.
func TestALoneStartIsRecordedAfterTheGathering(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 4, ReportGather: 200 * time.Millisecond})
	ctx := context.Background()
	a, _ := reservedGang(t, env, js, "lone", 3, 29500, domain.StateReserved)
	nodes := a.Placement.NodeNames()
	publish := func(node string) {
		t.Helper()
		r := domain.Report{JobID: "lone", Attempt: 1, Node: node, Kind: domain.ReportStarted}
		if err := env.Bus.PublishJSON(ctx, subjects.ReportFrom(node), "", r); err != nil {
			t.Fatal(err)
		}
	}
	publish(nodes[0])
	waitStartRecorded(t, env, "lone", nodes[0])
	// Remembered now: this one is gathered, and written when no other comes.
	publish(nodes[1])
	waitStartRecorded(t, env, "lone", nodes[1])
	if j, _, err := js.Get(ctx, "lone"); err != nil || j.State != domain.StateReserved {
		t.Fatalf("job %s (err %v) with a node still to start, want reserved", j.State, err)
	}
	publish(nodes[2])
	waitState(t, js, "lone", domain.StateRunning)
}

// waitStartRecorded waits until job's allocation records node started.
func waitStartRecorded(t *testing.T, env *testenv.Env, job, node string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		got, _, _, err := store.GetAllocation(context.Background(), env.Etcd, job)
		if err != nil || !got.Started[node] {
			return fmt.Errorf("%s's start of %s not recorded yet (err %v)", node, job, err)
		}
		return nil
	})
}

// modRevision is the key's current ModRevision.
func modRevision(t *testing.T, env *testenv.Env, key string) int64 {
	t.Helper()
	resp, err := env.Etcd.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("read %s: %v (%d keys)", key, err, len(resp.Kvs))
	}
	return resp.Kvs[0].ModRevision
}

// putsBetween counts the puts of key in the revisions (from, to], to 0
// meaning up to now, from etcd's history.
func putsBetween(t *testing.T, env *testenv.Env, key string, from, to int64) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now, err := env.Etcd.Get(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	last := now.Header.Revision
	if to > 0 {
		last = to
	}
	n := 0
	for resp := range env.Etcd.Watch(ctx, key, clientv3.WithRev(from+1)) {
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision > last {
				return n
			}
			if ev.Type == clientv3.EventTypePut {
				n++
			}
		}
		if resp.Header.Revision >= last {
			return n
		}
	}
	t.Fatalf("watch of %s ended: %v", key, ctx.Err())
	return n
}
