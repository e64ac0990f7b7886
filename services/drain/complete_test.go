package drain_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The last expected ack completes the drain as lifecycle.CompleteDrain
// decides, and the service applies all of it: the job requeued from the
// lowest acknowledged step, the gang's keys and the drain record released,
// checkpointed then requeued announced.
func TestAcknowledgedDrainRequeuesFromTheCheckpoint(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx := context.Background()
	keys := runningGang(t, env, js, "acked", 1)
	requestDrain(t, env, domain.DrainRequest{JobID: "acked", Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue, Reason: "checkpoint please"})
	waitFor(t, env, "acked", events.Draining, "")
	c, err := client.New(ctx, env.Bus, "agent")
	if err != nil {
		t.Fatal(err)
	}
	for rank := range 8 {
		step := int64(100 + rank)
		if rank == 3 {
			step = 90 // a laggard: every rank holds step 90, not all hold later ones
		}
		reply, err := c.Ack(ctx, "acked-n0", domain.CheckpointAck{JobID: "acked", Attempt: 1, Rank: rank, Step: step})
		if err != nil || !reply.OK || reply.Complete != (rank == 7) {
			t.Fatalf("ack of rank %d: %+v, %v", rank, reply, err)
		}
	}
	const reason = "checkpoint please: checkpoint acknowledged at step 90"
	if ev := waitFor(t, env, "acked", events.Checkpointed, ""); ev.Attempt != 1 || ev.Checkpoint == nil || ev.Checkpoint.Step != 90 {
		t.Errorf("checkpointed: %+v", ev)
	}
	if ev := waitFor(t, env, "acked", events.Requeued, ""); ev.Attempt != 1 || ev.Reason != reason || ev.Checkpoint == nil ||
		ev.Checkpoint.Step != 90 || ev.Timing == nil {
		t.Errorf("requeued: %+v", ev)
	}
	j, _, err := js.Get(ctx, "acked")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != domain.StatePending || j.Attempt != 2 || j.Reason != reason || j.LastCheckpoint == nil || j.LastCheckpoint.Step != 90 {
		t.Errorf("job after the drain: %s attempt %d %q from %+v", j.State, j.Attempt, j.Reason, j.LastCheckpoint)
	}
	if n := env.Held(t, append(keys, store.DrainKey("acked"))...); n > 0 {
		t.Errorf("%d keys of the gang and its drain still held", n)
	}
}

// A drain whose grace runs out without every ack ends anyway; a requeue
// then resumes from the job's last good checkpoint, and says so. No
// checkpointed event: this drain acknowledged none.
func TestDrainPastItsGraceResumesFromTheLastGoodCheckpoint(t *testing.T) {
	env, js := startDrainEnv(t)
	ctx := context.Background()
	keys := runningGang(t, env, js, "slow", 1)
	if _, _, err := js.Update(ctx, "slow", func(j *domain.Job) (bool, error) {
		j.Spec.Checkpoint.GracePeriod = jobspec.DurationOf(time.Second)
		j.LastCheckpoint = &domain.CheckpointRef{Step: 40, Attempt: 1}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	requestDrain(t, env, domain.DrainRequest{JobID: "slow", Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue, Reason: "maintenance"})
	const reason = "maintenance: grace period of 1s expired; ranks killed; resuming from the last good checkpoint (step 40)"
	if ev := waitFor(t, env, "slow", events.Requeued, ""); ev.Reason != reason || ev.Checkpoint == nil || ev.Checkpoint.Step != 40 {
		t.Errorf("requeued: %+v", ev)
	}
	if n := env.Held(t, append(keys, store.DrainKey("slow"))...); n > 0 {
		t.Errorf("%d keys of the gang and its drain still held", n)
	}
	if n := countEvents(t, env, "slow", events.Checkpointed); n != 0 {
		t.Errorf("%d checkpointed events for a drain nobody acknowledged", n)
	}
}

// countEvents counts the job's events of type typ published so far.
func countEvents(t *testing.T, env *testenv.Env, jobID string, typ events.Type) int {
	t.Helper()
	cons, err := env.Bus.JS.OrderedConsumer(context.Background(), subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEvent(subjects.AnyOwner, jobID, string(typ))},
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(100)
	if err != nil {
		t.Fatalf("fetch %s events: %v", typ, err)
	}
	n := 0
	for range batch.Messages() {
		n++
	}
	return n
}
