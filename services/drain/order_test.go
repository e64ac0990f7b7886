package drain_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The finding: the drain record (which agents act on, signalling the
// ranks) was written before the job record said draining, so a rank that
// died of the signal at once could reach gang in between and be recorded
// as the job's failure rather than the drain's business. Now, by the time
// a drain record appears, the job record already says draining. The old
// order lost this race to the test's read about one time in five, so
// eight gangs are drained.
func TestTheJobRecordSaysDrainingBeforeTheAgentsHear(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const gangs = 8
	for i := range gangs {
		runningGang(t, env, js, fmt.Sprintf("ordered-%d", i), 1)
	}
	watch := env.Etcd.Watch(ctx, store.DrainKey("ordered-"), clientv3.WithPrefix())
	for i := range gangs {
		requestDrain(t, env, domain.DrainRequest{JobID: fmt.Sprintf("ordered-%d", i), Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue})
	}
	seen := map[string]bool{}
	for resp := range watch {
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			id := strings.TrimPrefix(string(ev.Kv.Key), store.DrainKey(""))
			j, _, err := js.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if j.Drain == nil {
				t.Fatalf("the drain record of %s is in etcd while its job record does not say draining", id)
			}
			if seen[id] = true; len(seen) == gangs {
				return
			}
		}
	}
	t.Fatalf("drain records of %d of %d gangs appeared: %v", len(seen), gangs, ctx.Err())
}

// A job record that says draining without a drain record (a replica that
// stopped between the two writes) would stay running for ever: no agent
// signals its ranks, and gang leaves their exits to a drain that nothing
// ends. The watch loop writes the missing record from the job record's
// drain, its actor, times and reason kept; but not for a gang whose
// allocation is gone, which a record would outlive.
func TestADrainWithoutItsRecordIsTakenAgain(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx := context.Background()
	asked := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	d := domain.Drain{Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue, Reason: "maintenance",
		RequestedAt: asked, Deadline: asked.Add(10 * time.Minute), Actor: "alice"}
	for _, id := range []string{"gone", "orphan"} {
		runningGang(t, env, js, id, 2)
		if _, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) { return j.StartDrain(1, d), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Etcd.Delete(ctx, store.AllocKey("gone")); err != nil {
		t.Fatal(err)
	}
	var rec domain.DrainRecord
	testenv.Eventually(t, 30*time.Second, func() error {
		var found bool
		var err error
		if rec, _, found, err = store.GetDrain(ctx, env.Etcd, "orphan"); err == nil && !found {
			err = errors.New("no drain record yet")
		}
		return err
	})
	if rec.Attempt != 1 || rec.Drain != d {
		t.Errorf("drain record %+v, want the job record's drain %+v on attempt 1", rec, d)
	}
	if len(rec.Expected) != 16 {
		t.Errorf("expected acks %v, want the 16 ranks", rec.Expected)
	}
	// Orphans are taken in order of job ID, "gone" before "orphan".
	if _, _, found, err := store.GetDrain(ctx, env.Etcd, "gone"); err != nil || found {
		t.Errorf("a drain record for a gang whose allocation is gone (found %v, %v)", found, err)
	}
}

// A drain asked for as the gang goes (its allocation released, the job
// record not yet ended) writes no drain record, which would outlive the
// gang; a cancel asked for then is taken again, not dropped.
func TestADrainOfAGangGoingWritesNoRecord(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx := context.Background()
	runningGang(t, env, js, "going", 1)
	if _, err := env.Etcd.Delete(ctx, store.AllocKey("going")); err != nil {
		t.Fatal(err)
	}
	requestDrain(t, env, domain.DrainRequest{JobID: "going", Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue})
	testenv.Eventually(t, 30*time.Second, func() error {
		if j, _, err := js.Get(ctx, "going"); err != nil || j.Drain == nil {
			return fmt.Errorf("the job record does not say draining (%v)", err)
		}
		return nil
	})
	if _, _, found, err := store.GetDrain(ctx, env.Etcd, "going"); err != nil || found {
		t.Errorf("a drain record for a gang whose allocation is gone (found %v, %v)", found, err)
	}
}
