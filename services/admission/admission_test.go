package admission_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// start runs admission against a cluster inventory of two 8-GPU nodes,
// n1 of which runs container jobs.
func start(t *testing.T, opts ...func(*admission.Config)) (*testenv.Env, *jobs.Store) {
	t.Helper()
	env := testenv.Start(t)
	for _, n := range []string{"n1", "n2"} {
		node := domain.Node{Name: n, Addr: "127.0.0.1", GPUs: 8}
		if n == "n1" {
			node.ContainerRuntime = domain.ContainerRuntimeDocker
		}
		if _, err := env.Etcd.Put(context.Background(), store.InventoryKey(n), store.MustJSON(node)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := admission.Config{Base: env.Base(t)}
	for _, o := range opts {
		o(&cfg)
	}
	testenv.Serve(t, func(ctx context.Context) error { return admission.Run(ctx, cfg) })
	return env, env.Jobs(t)
}

func publish(t *testing.T, env *testenv.Env, msgID string, body []byte) {
	t.Helper()
	msg := nats.NewMsg(subjects.Submit)
	msg.Data = body
	if msgID != "" {
		msg.Header.Set(subjects.HeaderMsgID, msgID)
	}
	if _, err := env.Bus.JS.PublishMsg(context.Background(), msg); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// nextEvent waits for the next event of a job.
func waitEvent(t *testing.T, env *testenv.Env, jobID string, typ events.Type) events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cons, err := env.Bus.JS.OrderedConsumer(ctx, subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEvent(subjects.AnyOwner, jobID, string(typ))},
	})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(20 * time.Second))
	if err != nil {
		t.Fatalf("no %s event for %s: %v", typ, jobID, err)
	}
	var ev events.Event
	if err := json.Unmarshal(msg.Data(), &ev); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Event(msg.Data()); err != nil {
		t.Error(err)
	}
	return ev
}

const valid = `{"gang":{"nodes":2,"gpusPerNode":8},"command":["true"]}`

func TestBadSubmissionsAreRejectedWithTheirField(t *testing.T) {
	env, js := start(t)
	cases := []struct {
		msgID, body, wantJob, wantInReason string
	}{
		{"m-malformed", `{"gang":`, "m-malformed", "malformed JSON"},
		{"m-unknown", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"colour":1}`, "m-unknown", "colour"},
		{"m-nocmd", `{"gang":{"nodes":1,"gpusPerNode":1}}`, "m-nocmd", "command"},
		{"m-zero", `{"gang":{"nodes":0,"gpusPerNode":1},"command":["x"]}`, "m-zero", "gang.nodes"},
		{"m-neg", `{"gang":{"nodes":1,"gpusPerNode":-1},"command":["x"]}`, "m-neg", "gang.gpusPerNode"},
		{"m-absurd", `{"gang":{"nodes":99999999,"gpusPerNode":8},"command":["x"]}`, "m-absurd", "gang.nodes"},
		{"m-big", `{"gang":{"nodes":3,"gpusPerNode":8},"command":["x"]}`, "m-big", "gang: needs 3 nodes"},
		{"m-badid", `{"id":"NOPE_","gang":{"nodes":1,"gpusPerNode":1},"command":["x"]}`, "m-badid", "id"},
		{"m-huge", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"name":"` + strings.Repeat("x", 300<<10) + `"}`, "m-huge", "bytes"},
		// No usable ID anywhere: the event still carries the Nats-Msg-Id.
		{"Not Valid As An ID", `{"gang":`, "", "malformed JSON"},
	}
	for _, tc := range cases {
		publish(t, env, tc.msgID, []byte(tc.body))
	}
	for _, tc := range cases {
		jobID := tc.wantJob
		if jobID == "" {
			// Derived from the stream sequence: find it through the record.
			testenv.Eventually(t, 20*time.Second, func() error {
				all, err := js.List(context.Background())
				if err != nil {
					return err
				}
				for _, j := range all {
					if j.MsgID == tc.msgID {
						jobID = j.ID
						return nil
					}
				}
				return context.DeadlineExceeded
			})
		}
		ev := waitEvent(t, env, jobID, events.Rejected)
		if !strings.Contains(ev.Reason, tc.wantInReason) {
			t.Errorf("%s: reason %q does not mention %q", tc.msgID, ev.Reason, tc.wantInReason)
		}
		if ev.MsgID != tc.msgID {
			t.Errorf("%s: rejected event msgId = %q", tc.msgID, ev.MsgID)
		}
	}
	// The service survived all of it: a valid job is admitted next.
	publish(t, env, "good-one", []byte(valid))
	ev := waitEvent(t, env, "good-one", events.Admitted)
	if ev.Attempt != 1 {
		t.Errorf("admitted attempt = %d", ev.Attempt)
	}
}

func TestDuplicateSubmissionCreatesOneJob(t *testing.T) {
	env, js := start(t)
	body := `{"id":"dup-1","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`
	publish(t, env, "", []byte(body))
	publish(t, env, "", []byte(body)) // same id, no msg id: JetStream keeps both, admission dedupes
	publish(t, env, "pipe-7", []byte(valid))
	publish(t, env, "pipe-7", []byte(valid)) // same Nats-Msg-Id: JetStream dedupes
	waitEvent(t, env, "dup-1", events.Admitted)
	waitEvent(t, env, "pipe-7", events.Admitted)
	testenv.Eventually(t, 10*time.Second, func() error {
		info, err := env.Bus.JS.Stream(context.Background(), subjects.StreamJobs)
		if err != nil {
			return err
		}
		if n := info.CachedInfo().State.Msgs; n != 0 {
			return context.DeadlineExceeded // submissions still queued
		}
		return nil
	})
	all, err := js.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("want 2 jobs, got %d: %+v", len(all), all)
	}
	cons, err := env.Bus.JS.OrderedConsumer(context.Background(), subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEvent(subjects.AnyOwner, "dup-1", string(events.Admitted))},
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(10)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range batch.Messages() {
		n++
	}
	if n != 1 {
		t.Errorf("dup-1 admitted %d times", n)
	}
}

// The feasibility check reuses its view of the inventory between
// submissions; a node added to the inventory must count at once.
func TestAGangTooBigIsAdmittedOnceTheInventoryGrows(t *testing.T) {
	env, _ := start(t)
	big := []byte(`{"gang":{"nodes":3,"gpusPerNode":8},"command":["x"]}`)
	publish(t, env, "three-before", big)
	if ev := waitEvent(t, env, "three-before", events.Rejected); !strings.Contains(ev.Reason, "needs 3 nodes") {
		t.Fatalf("reason = %q", ev.Reason)
	}
	node := domain.Node{Name: "n3", Addr: "127.0.0.1", GPUs: 8}
	if _, err := env.Etcd.Put(context.Background(), store.InventoryKey("n3"), store.MustJSON(node)); err != nil {
		t.Fatal(err)
	}
	publish(t, env, "three-after", big)
	waitEvent(t, env, "three-after", events.Admitted)
}

// A container job needing more nodes with an engine than the cluster has
// is rejected at once, naming what the other nodes lack.
func TestAContainerGangNeedsNodesWithAnEngine(t *testing.T) {
	env, _ := start(t)
	publish(t, env, "ctr-one", []byte(`{"gang":{"nodes":1,"gpusPerNode":8},"command":["x"],"container":{"image":"probe"}}`))
	waitEvent(t, env, "ctr-one", events.Admitted)
	publish(t, env, "ctr-two", []byte(`{"gang":{"nodes":2,"gpusPerNode":8},"command":["x"],"container":{"image":"probe"}}`))
	if ev := waitEvent(t, env, "ctr-two", events.Rejected); !strings.Contains(ev.Reason, "1 without a container runtime") {
		t.Fatalf("reason = %q", ev.Reason)
	}
}
