package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
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
	evs := eventsOf(t, env, job.ID)
	if len(evs) != 2 || evs[0].Type != events.Admitted || evs[1].Type != events.Reserved {
		t.Fatalf("events = %+v, want admitted then reserved", evs)
	}
}

// A direct get of a job record answered onto a job's event subject is
// stored there by the events stream, as anyone who may read records can
// make it be; the job's events leave it out.
func TestEventsLeaveOutStoredAnswersOfDirectGets(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	job := domain.Job{ID: "spoofed", Owner: "bob", State: domain.StateRunning, Attempt: 1}
	if err := env.Jobs(t).Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	if err := env.Bus.PublishEvent(ctx, events.ForJob(events.Admitted, job, time.Now())); err != nil {
		t.Fatal(err)
	}
	onto := subjects.JobEvent(job.Owner, job.ID, string(events.Succeeded))
	get := "$JS.API.DIRECT.GET." + subjects.StreamKVJobs + ".$KV." + subjects.BucketJobs + "." + job.ID
	if err := env.Bus.NC.PublishRequest(get, onto, nil); err != nil {
		t.Fatal(err)
	}
	stream, err := env.Bus.JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		_, err := stream.GetLastMsgForSubject(ctx, onto)
		return err
	})
	evs := eventsOf(t, env, job.ID)
	if len(evs) != 1 || evs[0].Type != events.Admitted {
		t.Fatalf("events = %+v, want admitted alone", evs)
	}
}

// eventsOf is job id's events as a client reads them.
func eventsOf(t *testing.T, env *testenv.Env, id string) []events.Event {
	t.Helper()
	ctx := context.Background()
	cl, err := client.Dial(ctx, env.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	evs, err := cl.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
