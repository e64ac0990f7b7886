package gang_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The finding: a proposal carried a whole job record and gang took the
// spec (the command) from it, so one publish ran any command on any node —
// for a job that did not exist, on a drained node; and with a real pending
// job's ID, that job ran the forged command instead of its own. Now gang
// takes the job from the jobs KV and refuses a proposal whose job does not
// exist or whose placement the job's spec does not ask for: the forged
// proposals reserve nothing and are terminated (never redelivered), and
// the real job, proposed properly, runs its own command.
func TestForgedProposalsRunNothing(t *testing.T) {
	// Gang starts once n1 is drained: it loads the node states before it
	// takes a proposal, where a drain written after its start reaches it
	// through a watch that a proposal may overtake.
	env, js := startGangEnv(t, 0, gang.Config{})
	ctx := context.Background()

	lease := env.Lease(t, 10*time.Minute)
	env.RegisterNodes(t, lease, 2, "n0", "n1")
	if _, err := env.Etcd.Put(ctx, store.NodeStateKey("n1"), store.MustJSON(domain.NodeState{Drained: true, Reason: "maintenance"})); err != nil {
		t.Fatal(err)
	}
	mine := []string{"echo", "mine"}
	spec := testenv.GangSpec("real", 1, 2, mine...)
	if err := js.Create(ctx, domain.Job{ID: "real", Spec: spec, State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	startGang(t, env, 1, gang.Config{Workers: 2})

	on := func(node string, gpus ...int) domain.Placement {
		np := domain.NodePlacement{Node: node, GPUs: gpus}
		for i, g := range gpus {
			np.Ranks = append(np.Ranks, domain.Rank{Rank: i, LocalRank: i, GPUs: []int{g}})
		}
		return domain.Placement{MasterAddr: node, MasterPort: 29500, Nodes: []domain.NodePlacement{np}}
	}
	// forged is a proposal as the old wire format had it: the job record,
	// with an attacker's command, inside the message.
	forged := func(id string, p domain.Placement) map[string]any {
		evil := spec
		evil.ID, evil.Command = id, []string{"sh", "-c", "id > /tmp/pwned"}
		return map[string]any{"jobId": id, "attempt": 1, "placement": p, "jobRevision": 1,
			"job": domain.Job{ID: id, Spec: evil, State: domain.StatePending, Attempt: 1}}
	}
	publish := func(msgID string, v any) {
		t.Helper()
		if err := env.Bus.PublishJSON(ctx, subjects.Reserve, msgID, v); err != nil {
			t.Fatal(err)
		}
	}
	publish("forged.ghost", forged("ghost", on("n1", 0, 1)))        // no such job, drained node
	publish("forged.ghost-n0", forged("ghost", on("n0", 0, 1)))     // no such job
	publish("forged.real.unfit", forged("real", on("n0", 0, 1, 2))) // GPU 2 n0 does not have
	publish("forged.real.drained", forged("real", on("n1", 0, 1)))  // a drained node
	publish("forged.garbage", "not a proposal")
	waitConsumed(t, env, subjects.DurableGang, 5)

	if left := keysUnder(t, env, store.AllocPrefix, store.ClaimsPrefix, store.PortsPrefix, store.AssignPrefix); len(left) > 0 {
		t.Fatalf("forged proposals wrote %v", left)
	}
	j, _, err := js.Get(ctx, "real")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != domain.StatePending || !strings.Contains(j.Reason, "node n1 is drained") {
		t.Errorf("real job after forged proposals: %s %q, want pending, proposed again after the drained node", j.State, j.Reason)
	}

	// The real proposal, still carrying a forged record: gang ignores it.
	publish("real", forged("real", on("n0", 0, 1)))
	waitState(t, js, "real", domain.StateReserved)
	var as domain.Assignment
	if found, _, err := store.GetJSON(ctx, env.Etcd, store.AssignKey("n0", "real"), &as); err != nil || !found {
		t.Fatalf("assignment of the real job: found=%v err=%v", found, err)
	}
	if fmt.Sprint(as.Command) != fmt.Sprint(mine) {
		t.Errorf("the real job's assignment runs %q, want its own %q", as.Command, mine)
	}
	if left := keysUnder(t, env, store.AssignPrefix); len(left) != 1 {
		t.Errorf("assignments %v, want only the real job's on n0", left)
	}
}

// keysUnder lists the keys under the prefixes.
func keysUnder(t *testing.T, env *testenv.Env, prefixes ...string) []string {
	t.Helper()
	var out []string
	for _, p := range prefixes {
		resp, err := env.Etcd.Get(context.Background(), p, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			out = append(out, string(kv.Key))
		}
	}
	return out
}

// A requeue can reach placement before the attempt it ends has released
// its allocation; the next attempt's proposal on the same GPUs then finds
// them held by the job itself. Gang releases the old attempt and reserves
// the new one at once, with no conflict event and no second round through
// placement.
func TestProposalRacingItsOwnRequeueIsReserved(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2})
	ctx := context.Background()
	const id = "requeued"
	a, _ := reservedGang(t, env, js, id, 2, 29700, domain.StateRunning)
	now := time.Now().UTC()
	if _, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) {
		changed, _ := j.Requeue(1, "checkpointed", now)
		return changed, nil
	}); err != nil {
		t.Fatal(err)
	}
	prop := domain.Proposal{JobID: id, Attempt: 2, Placement: a.Placement, ProposedAt: now}
	if err := env.Bus.PublishJSON(ctx, subjects.Reserve, "", prop); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		j, _, err := js.Get(ctx, id)
		if err != nil {
			return err
		}
		if j.Attempt != 2 || j.State != domain.StateReserved {
			return fmt.Errorf("job is %s on attempt %d, want reserved on attempt 2", j.State, j.Attempt)
		}
		return nil
	})
	cons, err := env.Bus.JS.OrderedConsumer(ctx, subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEvent(subjects.AnyOwner, id, string(events.Conflict))},
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(10)
	if err != nil {
		t.Fatal(err)
	}
	for msg := range batch.Messages() {
		t.Errorf("conflict event: %s", msg.Data())
	}
}
