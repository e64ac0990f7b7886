package drain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/services/drain"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

var (
	alice = auth.Identity{Name: "alice", Role: auth.RoleUser}
	bob   = auth.Identity{Name: "bob", Role: auth.RoleUser}
	olga  = auth.Identity{Name: "olga", Role: auth.RoleOperator}
)

// ownedCluster is a drain replica, under its own identity, on a cluster
// with auth that holds alice, bob and olga (an operator of the policy) to
// the permission table.
func ownedCluster(t *testing.T) (*testenv.Env, *jobs.Store) {
	t.Helper()
	env := testenv.Start(t, testenv.WithAuth())
	cfg := drain.Config{Base: env.Base(t), CheckInterval: 20 * time.Millisecond, Queues: queue.Config{Operators: []string{"olga"}}}
	cfg.Credentials = env.Auth.Credentials(t, auth.Identity{Name: "drain", Role: auth.RoleDrain})
	testenv.Serve(t, func(ctx context.Context) error { return drain.Run(ctx, cfg) })
	return env, env.Jobs(t)
}

// as is a client acting as id, the way the CLI does once it has creds.
func as(t *testing.T, env *testenv.Env, id auth.Identity) (*client.Client, <-chan error) {
	t.Helper()
	b, errs := env.ConnectAs(t, id)
	c, err := client.New(context.Background(), b, id.Name)
	if err != nil {
		t.Fatal(err)
	}
	return c, errs
}

// waitFor waits for a job event of type typ from actor.
func waitFor(t *testing.T, env *testenv.Env, jobID string, typ events.Type, actor string) events.Event {
	t.Helper()
	var found events.Event
	testenv.Eventually(t, 20*time.Second, func() error {
		cons, err := env.Bus.JS.OrderedConsumer(context.Background(), subjects.StreamEvents, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subjects.JobEvent(subjects.AnyOwner, jobID, string(typ))},
		})
		if err != nil {
			return err
		}
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			ev, err := events.DecodeFrom(msg.Subject(), msg.Data())
			if err != nil {
				t.Fatalf("event %s: %v", msg.Subject(), err)
			}
			if ev.Actor == actor {
				found = ev
				return nil
			}
		}
		return errors.Newf("no %s event by %q for %s", typ, actor, jobID)
	})
	return found
}

// Bob can neither cancel nor drain alice's jobs: the services refuse his
// requests on his own subjects, naming him, and the server refuses him
// alice's subjects. Alice's jobs are unaffected until alice, or an
// operator, acts; and each of those events names who did.
func TestOnlyTheOwnerOrAnOperatorControlsAJob(t *testing.T) {
	env, js := ownedCluster(t)
	ctx := context.Background()
	keys := runningGang(t, env, js, "a-run", 1)
	for _, id := range []string{"a-run", "a-pend", "a-ops"} {
		if id != "a-run" {
			if err := js.Create(ctx, domain.Job{ID: id, State: domain.StatePending, Attempt: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := js.Update(ctx, id, func(j *domain.Job) (bool, error) { j.Owner = "alice"; return true, nil }); err != nil {
			t.Fatal(err)
		}
	}

	bobc, bobErrs := as(t, env, bob)
	if err := bobc.Cancel(ctx, "a-pend", "mine now"); err != nil {
		t.Fatal(err)
	}
	if err := bobc.Drain(ctx, "a-run", domain.DrainCancel, domain.ThenCancel, "mine now"); err != nil {
		t.Fatal(err)
	}
	if err := bobc.Drain(ctx, "a-run", domain.DrainCheckpoint, domain.ThenRequeue, "mine now"); err != nil {
		t.Fatal(err)
	}
	if ev := waitFor(t, env, "a-pend", events.Refused, "bob"); ev.Reason != "cancel refused: job a-pend belongs to alice" || ev.Owner != "alice" {
		t.Errorf("bob's cancel: %+v", ev)
	}
	if ev := waitFor(t, env, "a-run", events.Refused, "bob"); !strings.Contains(ev.Reason, "job a-run belongs to alice") {
		t.Errorf("bob's drain: %+v", ev)
	}
	// On alice's subject the server itself refuses him.
	for _, subject := range []string{subjects.CancelAs("alice"), subjects.DrainAs("alice"), subjects.Cancel, subjects.Drain} {
		if !serverRefuses(t, bobc, bobErrs, subject) {
			t.Errorf("bob published on %s", subject)
		}
	}
	for _, id := range []string{"a-pend", "a-run"} {
		j, _, err := js.Get(ctx, id)
		if err != nil || j.State.Terminal() || j.Drain != nil {
			t.Errorf("%s after bob: state %s drain %+v err %v", id, j.State, j.Drain, err)
		}
	}
	if n := env.Held(t, keys...); n != len(keys) {
		t.Errorf("a-run holds %d of its %d keys after bob", n, len(keys))
	}

	// Alice checkpoints her running job and cancels her pending one; olga,
	// an operator, cancels another of hers.
	alicec, _ := as(t, env, alice)
	if err := alicec.Drain(ctx, "a-run", domain.DrainCheckpoint, domain.ThenRequeue, "checkpoint please"); err != nil {
		t.Fatal(err)
	}
	if err := alicec.Cancel(ctx, "a-pend", ""); err != nil {
		t.Fatal(err)
	}
	olgac, _ := as(t, env, olga)
	if err := olgac.Cancel(ctx, "a-ops", "maintenance"); err != nil {
		t.Fatal(err)
	}
	if ev := waitFor(t, env, "a-run", events.Draining, "alice"); ev.Drain == nil || ev.Drain.Actor != "alice" {
		t.Errorf("draining: %+v", ev)
	}
	waitFor(t, env, "a-pend", events.Cancelled, "alice")
	waitFor(t, env, "a-ops", events.Cancelled, "olga")
}

// serverRefuses publishes a cancel request on subject and reports whether
// the server refused it with a permissions violation.
func serverRefuses(t *testing.T, c *client.Client, errs <-chan error, subject string) bool {
	t.Helper()
	nc := c.Bus().NC
	if err := nc.Publish(subject, []byte(`{"jobId":"a-pend"}`)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		return strings.Contains(strings.ToLower(err.Error()), "permissions violation") && strings.Contains(err.Error(), subject)
	case <-time.After(2 * time.Second):
		return false
	}
}
