package gang_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

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
			return errorf("job is %s on attempt %d, want reserved on attempt 2", j.State, j.Attempt)
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
