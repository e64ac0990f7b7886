package admission_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// publishAs publishes a submission on user's subject ("" for the shared
// one), as the server would let only that user do on a cluster with auth.
func publishAs(t *testing.T, env *testenv.Env, user, msgID, body string) {
	t.Helper()
	subject := subjects.Submit
	if user != "" {
		subject = subjects.SubmitAs(user)
	}
	msg := nats.NewMsg(subject)
	msg.Data = []byte(body)
	if msgID != "" {
		msg.Header.Set(subjects.HeaderMsgID, msgID)
	}
	if _, err := env.Bus.JS.PublishMsg(context.Background(), msg); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func TestOwnerComesFromTheSubject(t *testing.T) {
	env, js := start(t)
	publishAs(t, env, "alice", "", `{"id":"a-1","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	if ev := waitEvent(t, env, "a-1", events.Admitted); ev.Owner != "alice" {
		t.Errorf("admitted event owner = %q", ev.Owner)
	}
	if j, _, err := js.Get(context.Background(), "a-1"); err != nil || j.Owner != "alice" {
		t.Fatalf("record: owner %q, err %v", j.Owner, err)
	}
	// The shared subject has no owner: a cluster without auth, as before.
	publishAs(t, env, "", "", `{"id":"anon-1","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	if ev := waitEvent(t, env, "anon-1", events.Admitted); ev.Owner != "" {
		t.Errorf("anonymous job has owner %q", ev.Owner)
	}
	// A spec claiming an owner is not a spec: the field is unknown, and
	// the record names whoever published it.
	publishAs(t, env, "bob", "", `{"id":"claim-1","owner":"alice","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	ev := waitEvent(t, env, "claim-1", events.Rejected)
	if !strings.Contains(ev.Reason, "owner") || ev.Owner != "bob" {
		t.Errorf("claimed owner: reason %q, owner %q", ev.Reason, ev.Owner)
	}
	// A subject that names no valid user is refused.
	publishAs(t, env, "Not.A.User", "bad-subject", valid)
	if ev := waitEvent(t, env, "bad-subject", events.Rejected); !strings.Contains(ev.Reason, "names no valid user") {
		t.Errorf("bad subject: reason %q", ev.Reason)
	}
}

// Bob can neither take over nor block alice's job ID, and alice's second
// submission under her ID says it exists instead of replaying.
func TestAnotherUsersIDIsRefused(t *testing.T) {
	env, js := start(t)
	spec := `{"id":"train-1","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`
	publishAs(t, env, "alice", "", spec)
	waitEvent(t, env, "train-1", events.Admitted)
	publishAs(t, env, "bob", "", spec)
	ev := waitEvent(t, env, "train-1", events.Refused)
	if ev.Reason != "id already used by another user" || ev.Actor != "bob" || ev.Owner != "alice" {
		t.Errorf("bob's submission: %+v", ev)
	}
	// Bob's resubmission as a spec that fails validation is no better: it
	// must not land a rejected event on alice's job either.
	publishAs(t, env, "bob", "", `{"id":"train-1","gang":{"nodes":0,"gpusPerNode":8},"command":["true"]}`)
	publishAs(t, env, "alice", "", spec)
	testenv.Eventually(t, 20*time.Second, func() error {
		evs := allEvents(t, env, "train-1")
		n := 0
		for _, ev := range evs {
			switch {
			case ev.Type == events.Rejected:
				t.Fatalf("alice's job got a rejected event: %+v", ev)
			case ev.Type == events.Refused && ev.Actor == "alice" && strings.Contains(ev.Reason, "already exists"):
				n++
			case ev.Type == events.Refused && ev.Actor == "bob":
				n++
			}
		}
		if n < 3 {
			return context.DeadlineExceeded
		}
		return nil
	})
	j, _, err := js.Get(context.Background(), "train-1")
	if err != nil || j.Owner != "alice" || j.State != domain.StatePending {
		t.Errorf("alice's job after bob's tries: owner %q state %s err %v", j.Owner, j.State, err)
	}
}

func TestQueuePolicyRejectsWithTheReason(t *testing.T) {
	one, ten := 1, 10
	env, _ := start(t, func(c *admission.Config) {
		c.Queues.Queues = map[string]queue.QueueConfig{
			"prod":     {AllowUsers: []string{"alice"}, AllowGroups: []string{"ml"}},
			"research": {MaxPriority: &ten, AllowRoot: true},
		}
		c.Queues.Groups = map[string][]string{"ml": {"carol"}}
		c.Queues.Users = map[string]queue.UserConfig{"dave": {MaxPendingJobs: one}}
	})
	job := func(id, queue string, prio int) string {
		return `{"id":"` + id + `","queue":"` + queue + `","priority":` + strconv.Itoa(prio) + `,"gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`
	}
	publishAs(t, env, "bob", "", job("bob-prod", "prod", 0))
	publishAs(t, env, "carol", "", job("carol-prod", "prod", 0))
	publishAs(t, env, "bob", "", job("bob-high", "research", 11))
	publishAs(t, env, "dave", "", job("dave-1", "research", 0))
	waitEvent(t, env, "dave-1", events.Admitted)
	publishAs(t, env, "dave", "", job("dave-2", "research", 0))
	// A container as root: refused in the default queue, admitted where
	// the queue allows it.
	rootJob := func(id, queue string) string {
		return `{"id":"` + id + `","queue":"` + queue + `","gang":{"nodes":1,"gpusPerNode":8},"command":["true"],"container":{"image":"busybox","user":"root"}}`
	}
	publishAs(t, env, "erin", "", rootJob("erin-root", "default"))
	publishAs(t, env, "erin", "", rootJob("erin-root-research", "research"))
	for id, want := range map[string]string{
		"erin-root": `RootContainer: queue "default": the container would run as root (container.user "root", owner erin), which the queue does not allow (allowRoot)`,
		"bob-prod":  `QueueAccess: queue "prod": user bob may not submit`,
		"bob-high":  "PriorityAboveMax: priority 11 is above queue \"research\"'s maximum of 10",
		"dave-2":    "UserPendingLimit: dave already has 1 pending jobs (limit 1)",
	} {
		if ev := waitEvent(t, env, id, events.Rejected); !strings.Contains(ev.Reason, want) {
			t.Errorf("%s: reason %q, want %q", id, ev.Reason, want)
		}
	}
	waitEvent(t, env, "carol-prod", events.Admitted) // by her group
	waitEvent(t, env, "erin-root-research", events.Admitted)
}

// allEvents reads every event of a job so far.
func allEvents(t *testing.T, env *testenv.Env, jobID string) []events.Event {
	t.Helper()
	cons, err := env.Bus.JS.OrderedConsumer(context.Background(), subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEvents(subjects.AnyOwner, jobID)},
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(100)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for msg := range batch.Messages() {
		ev, err := events.DecodeFrom(msg.Subject(), msg.Data())
		if err != nil {
			t.Fatalf("event on %s: %v", msg.Subject(), err)
		}
		out = append(out, ev)
	}
	return out
}

// The stream drops a second message with the same Nats-Msg-Id whoever sent
// it, so bob can take alice's message ID before she publishes. The drop is
// not silent: alice's client is told the ID is another user's; her own
// retry is still a quiet no-op.
func TestSquattedMessageIDIsReportedToTheSubmitter(t *testing.T) {
	env, _ := start(t)
	ctx := context.Background()
	alice, err := client.New(ctx, env.Bus, "alice")
	if err != nil {
		t.Fatal(err)
	}
	spec := func(id string) []byte {
		return []byte(`{"id":"` + id + `","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	}

	publishAs(t, env, "bob", "nightly-42", string(spec("nightly-42")))
	waitEvent(t, env, "nightly-42", events.Admitted)
	if _, err := alice.Submit(ctx, spec("nightly-42")); !errors.Is(err, client.ErrIDTaken) {
		t.Errorf("alice's submission under bob's message ID: %v, want ErrIDTaken", err)
	}

	publishAs(t, env, "bob", "nightly-43", `{"id":"nightly-43","gang":{"nodes":1.5},"command":["true"]}`)
	waitEvent(t, env, "nightly-43", events.Rejected)
	// A rejected submission keeps its record (and its ID) too.
	if _, err := alice.Submit(ctx, spec("nightly-43")); !errors.Is(err, client.ErrIDTaken) {
		t.Errorf("alice's submission under bob's rejected message's ID: %v, want ErrIDTaken", err)
	}

	if _, err := alice.Submit(ctx, spec("nightly-44")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, env, "nightly-44", events.Admitted)
	if _, err := alice.Submit(ctx, spec("nightly-44")); err != nil {
		t.Errorf("alice's retry of her own submission: %v", err)
	}
}

// Alice's job may not depend on bob's: its outcome would tell her how
// bob's job ended. Her own jobs, and IDs with no record (placement ends
// those), pass; a job without an owner may name anyone's.
func TestDependencyOnAnotherUsersJobIsRejected(t *testing.T) {
	env, _ := start(t)
	publishAs(t, env, "bob", "", `{"id":"bobs","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	waitEvent(t, env, "bobs", events.Admitted)
	publishAs(t, env, "alice", "", `{"id":"alices","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	waitEvent(t, env, "alices", events.Admitted)

	publishAs(t, env, "alice", "", `{"id":"spy","gang":{"nodes":1,"gpusPerNode":8},"command":["true"],
		"dependencies":[{"type":"afterok","jobs":["alices"]},{"type":"afternotok","jobs":["ghost","bobs"]}]}`)
	ev := waitEvent(t, env, "spy", events.Rejected)
	if !strings.Contains(ev.Reason, "dependencies.1.jobs.1: job bobs belongs to another user") || ev.Owner != "alice" {
		t.Errorf("dependency on bob's job: %+v", ev)
	}
	publishAs(t, env, "alice", "", `{"id":"chained","gang":{"nodes":1,"gpusPerNode":8},"command":["true"],
		"dependencies":[{"type":"afterok","jobs":["alices","ghost"]}]}`)
	waitEvent(t, env, "chained", events.Admitted)
	publishAs(t, env, "", "", `{"id":"admins","gang":{"nodes":1,"gpusPerNode":8},"command":["true"],
		"dependencies":[{"type":"afterany","jobs":["bobs","alices"]}]}`)
	waitEvent(t, env, "admins", events.Admitted)
	// A job whose ID comes from the message ID cannot name itself either.
	publishAs(t, env, "alice", "self-ref", `{"gang":{"nodes":1,"gpusPerNode":8},"command":["true"],
		"dependencies":[{"type":"after","jobs":["self-ref"]}]}`)
	if ev := waitEvent(t, env, "self-ref", events.Rejected); !strings.Contains(ev.Reason, "cannot depend on itself") {
		t.Errorf("self dependency: %+v", ev)
	}
}
