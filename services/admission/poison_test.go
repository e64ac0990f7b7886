package admission_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// poisonCount is more than the consumer's 1,024 in-flight slots, the
// number that stalled admission when poison was retried for ever.
const poisonCount = 2000

// "nodes": 1.0 passes the schema (an integer-valued number) but not Go's
// decoding into an int. It used to be an internal error, retried for ever:
// 1,100 of them held every in-flight slot and a valid job waited > 90 s.
// Now each is rejected naming the field, and the valid job behind them is
// admitted within seconds.
func TestPoisonSubmissionsAreRejectedAndDoNotStallAdmission(t *testing.T) {
	env, _ := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	poison := []byte(`{"gang":{"nodes":1.0,"gpusPerNode":8},"command":["true"]}`)
	var acks []jetstream.PubAckFuture
	for i := range poisonCount {
		msg := nats.NewMsg(subjects.Submit)
		msg.Data = poison
		msg.Header.Set(subjects.HeaderMsgID, fmt.Sprintf("poison-%d", i))
		f, err := env.Bus.JS.PublishMsgAsync(msg)
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, f)
	}
	select {
	case <-env.Bus.JS.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("poison not published")
	}
	for _, f := range acks {
		select {
		case err := <-f.Err():
			t.Fatalf("publish: %v", err)
		default:
		}
	}
	published := time.Now()
	publish(t, env, "after-poison", []byte(valid))
	ev := waitEvent(t, env, "after-poison", events.Admitted)
	if took := time.Since(published); took > 20*time.Second {
		t.Errorf("the valid job was admitted %s after the poison, want seconds", took)
	}
	if ev.Attempt != 1 {
		t.Errorf("admitted attempt = %d", ev.Attempt)
	}

	// Every poison submission got its rejected event, naming the field.
	testenv.Eventually(t, 90*time.Second, func() error {
		n, err := countEvents(ctx, env, subjects.JobEvent(subjects.AnyOwner, "*", string(events.Rejected)))
		if err != nil {
			return err
		}
		if n != poisonCount {
			return errors.Newf("%d of %d poison submissions rejected", n, poisonCount)
		}
		return nil
	})
	for _, i := range []int{0, poisonCount / 2, poisonCount - 1} {
		id := fmt.Sprintf("poison-%d", i)
		if ev := waitEvent(t, env, id, events.Rejected); !strings.Contains(ev.Reason, "gang.nodes: must be an integer") {
			t.Errorf("%s: reason %q does not name gang.nodes", id, ev.Reason)
		}
	}
}

// countEvents counts the events on subjects matching filter.
func countEvents(ctx context.Context, env *testenv.Env, filter string) (int, error) {
	s, err := env.Bus.JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range info.State.Subjects {
		n += int(c)
	}
	return n, nil
}

// A submission admission cannot process (here: its ID names a job record
// that does not decode) is rejected once its deliveries run out, with a
// reason; before, it was retried for ever and its submitter never heard.
func TestSubmissionAdmissionCannotProcessIsRejectedAfterMaxDeliver(t *testing.T) {
	env, _ := start(t, func(c *admission.Config) { c.MaxDeliver = 2 })
	kv, err := env.Bus.JS.KeyValue(context.Background(), subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "mangled", []byte(`{"id":"mangled","attempt":"two"}`)); err != nil {
		t.Fatal(err)
	}
	publish(t, env, "m-1", []byte(`{"id":"mangled","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`))
	ev := waitEvent(t, env, "mangled", events.Rejected)
	if !strings.Contains(ev.Reason, "not admitted after 2 deliveries") || ev.MsgID != "m-1" {
		t.Errorf("rejected event: reason %q msgId %q", ev.Reason, ev.MsgID)
	}
}
