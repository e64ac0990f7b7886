package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Two services publish a job's first events; the later one can reach the
// stream first. The history reads in the order things happened.
func TestEventsReadInCausalOrder(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	job := domain.Job{ID: "late-admit", State: domain.StateReserved, Attempt: 1}
	if err := env.Jobs(t).Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	admitted := time.Now()
	for _, ev := range []events.Event{
		events.ForJob(events.Reserved, job, admitted.Add(3*time.Millisecond)),
		events.ForJob(events.Admitted, job, admitted),
	} {
		if err := env.Bus.PublishEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.Dial(ctx, env.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	evs, err := cl.Events(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Type != events.Admitted || evs[1].Type != events.Reserved {
		t.Fatalf("events = %+v, want admitted then reserved", evs)
	}
}
