package bus_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// harness is a bus with a metric reader and a recorder of given-up messages.
type harness struct {
	env    *testenv.Env
	b      *bus.Bus
	reader *sdkmetric.ManualReader
	mu     sync.Mutex
	gaveUp []bus.Undeliverable
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	env := testenv.Start(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	b, err := bus.Connect(context.Background(), env.NATSURL, "redelivery-test", bus.WithMeter(mp.Meter("test")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return &harness{env: env, b: b, reader: reader}
}

func (h *harness) giveUp(_ context.Context, u bus.Undeliverable) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gaveUp = append(h.gaveUp, u)
	return nil
}

func (h *harness) given() []bus.Undeliverable {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bus.Undeliverable(nil), h.gaveUp...)
}

// terminated reads lockstep.messages.terminated for one consumer and reason.
func (h *harness) terminated(t *testing.T, durable, reason string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != telemetry.MetricTerminated || !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				c, _ := dp.Attributes.Value(telemetry.LabelConsumer)
				r, _ := dp.Attributes.Value(telemetry.LabelReason)
				if c.AsString() == durable && r.AsString() == reason {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// workEmpty waits until the work-queue stream holds no message.
func (h *harness) workEmpty(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, func() error {
		s, err := h.b.JS.Stream(context.Background(), subjects.StreamWork)
		if err != nil {
			return err
		}
		if n := s.CachedInfo().State.Msgs; n != 0 {
			return errors.Newf("%d messages still in %s", n, subjects.StreamWork)
		}
		return nil
	})
}

// consume binds a consumer of the work stream's report subject for the
// rest of the test and counts the calls of its handler.
func (h *harness) consume(t *testing.T, spec bus.ConsumerSpec, handle func(ctx context.Context) error) *atomic.Int64 {
	t.Helper()
	spec.Stream, spec.Filter = subjects.StreamWork, subjects.Report
	calls := new(atomic.Int64)
	if _, err := h.b.Consume(t.Context(), spec, slog.New(slog.DiscardHandler), func(ctx context.Context, _ jetstream.Msg) error {
		calls.Add(1)
		return handle(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	return calls
}

func (h *harness) publish(t *testing.T, msgID string) {
	t.Helper()
	if err := h.b.PublishJSON(context.Background(), subjects.Report, msgID, map[string]string{"id": msgID}); err != nil {
		t.Fatal(err)
	}
}

// A message whose handler always fails is delivered MaxDeliver times, then
// terminated with a trace (log, counter, GiveUp); before, it was
// redelivered for ever and held an in-flight slot.
func TestAlwaysFailingMessageIsTerminatedAfterMaxDeliver(t *testing.T) {
	h := newHarness(t)
	calls := h.consume(t, bus.ConsumerSpec{Durable: "fail-test", MaxDeliver: 3, GiveUp: h.giveUp}, func(context.Context) error {
		return errors.New("etcd is having a bad day")
	})
	h.publish(t, "poison-1")
	h.workEmpty(t)
	if n := calls.Load(); n != 3 {
		t.Errorf("handler called %d times, want MaxDeliver = 3", n)
	}
	got := h.given()
	if len(got) != 1 || got[0].Reason != telemetry.TermExhausted || got[0].Deliveries != 3 || got[0].Subject != subjects.Report ||
		got[0].Header.Get(subjects.HeaderMsgID) != "poison-1" || got[0].Err == nil || got[0].StreamSeq == 0 {
		t.Fatalf("gave up on %+v, want one exhausted message after 3 deliveries", got)
	}
	if n := h.terminated(t, "fail-test", telemetry.TermExhausted); n != 1 {
		t.Errorf("terminated counter = %d, want 1", n)
	}
}

// A permanent error terminates at once, with the same trace.
func TestPermanentErrorIsTerminatedAtOnce(t *testing.T) {
	h := newHarness(t)
	calls := h.consume(t, bus.ConsumerSpec{Durable: "perm-test", GiveUp: h.giveUp}, func(context.Context) error {
		return errs.MarkPermanent(errors.New("report.kind: unknown"))
	})
	h.publish(t, "forged-1")
	h.workEmpty(t)
	if n := calls.Load(); n != 1 {
		t.Errorf("handler called %d times, want 1", n)
	}
	if got := h.given(); len(got) != 1 || got[0].Reason != telemetry.TermInvalid {
		t.Fatalf("gave up on %+v, want one invalid message", got)
	}
	if n := h.terminated(t, "perm-test", telemetry.TermInvalid); n != 1 {
		t.Errorf("terminated counter = %d, want 1", n)
	}
}

// A message no handler ever answers (it hangs past MaxHandle, or its
// replica dies each time) is given up and deleted once the server stops
// delivering it; before, it stayed in the work queue for ever, unseen.
func TestMessageThatAlwaysTimesOutIsGivenUpAndDeleted(t *testing.T) {
	h := newHarness(t)
	calls := h.consume(t, bus.ConsumerSpec{
		Durable: "hang-test", MaxDeliver: 2, AckWait: 300 * time.Millisecond, MaxHandle: 300 * time.Millisecond, Workers: 4, GiveUp: h.giveUp,
	}, func(ctx context.Context) error {
		<-ctx.Done() // hangs until the test ends
		return ctx.Err()
	})
	h.publish(t, "hangs-1")
	h.workEmpty(t)
	if got := h.given(); len(got) != 1 || got[0].Reason != telemetry.TermTimedOut || got[0].Deliveries != 2 ||
		got[0].Header.Get(subjects.HeaderMsgID) != "hangs-1" {
		t.Fatalf("gave up on %+v, want one timed-out message after 2 deliveries", got)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("handler called %d times, want 2", n)
	}
	if n := h.terminated(t, "hang-test", telemetry.TermTimedOut); n != 1 {
		t.Errorf("terminated counter = %d, want 1", n)
	}
}

// A handler at work for several ack waits keeps its message: it says it
// is in progress, so no other worker gets the message meanwhile, and the
// ack wait bounds only what a dead replica costs.
func TestSlowHandlerKeepsItsMessage(t *testing.T) {
	h := newHarness(t)
	calls := h.consume(t, bus.ConsumerSpec{
		Durable: "slow-test", AckWait: 300 * time.Millisecond, Workers: 4, GiveUp: h.giveUp,
	}, func(context.Context) error {
		time.Sleep(1500 * time.Millisecond)
		return nil
	})
	h.publish(t, "slow-1")
	h.workEmpty(t)
	if n := calls.Load(); n != 1 {
		t.Errorf("handler called %d times for one message it took 5 ack waits over, want 1", n)
	}
	if got := h.given(); len(got) != 0 {
		t.Errorf("gave up on %+v, want none", got)
	}
}

// Every consumer the bus binds has a finite MaxDeliver and a BackOff that
// starts at its ack wait.
func TestConsumersAreBounded(t *testing.T) {
	h := newHarness(t)
	h.consume(t, bus.ConsumerSpec{Durable: "bounded-test"}, func(context.Context) error { return nil })
	cons, err := h.b.JS.Consumer(t.Context(), subjects.StreamWork, "bounded-test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	if cfg.MaxDeliver != bus.DefaultMaxDeliver || len(cfg.BackOff) != bus.DefaultMaxDeliver || cfg.BackOff[0] != 30*time.Second ||
		cfg.BackOff[len(cfg.BackOff)-1] <= cfg.BackOff[0] {
		t.Errorf("consumer config: MaxDeliver %d, BackOff %v", cfg.MaxDeliver, cfg.BackOff)
	}
}

func TestRetryDelayGrowsAndIsCapped(t *testing.T) {
	prev := time.Duration(0)
	for n := uint64(0); n < 100; n++ {
		d := bus.RetryDelay(n)
		if d < prev || d <= 0 || d > 30*time.Second {
			t.Fatalf("RetryDelay(%d) = %s after %s", n, d, prev)
		}
		prev = d
	}
	if bus.RetryDelay(1) != 250*time.Millisecond || bus.RetryDelay(1000) != 30*time.Second {
		t.Errorf("RetryDelay(1) = %s, RetryDelay(1000) = %s", bus.RetryDelay(1), bus.RetryDelay(1000))
	}
}

// A replica shutting down hands back the messages it pulled but had not
// started: another replica gets them at once, not after AckWait (30 s).
func TestShutdownHandsBackPulledMessages(t *testing.T) {
	h := newHarness(t)
	spec := bus.ConsumerSpec{Stream: subjects.StreamWork, Durable: "handback-test", Filter: subjects.Reserve, AckWait: 30 * time.Second}
	first, stop := context.WithCancel(context.Background())
	started := make(chan struct{}, 1)
	done, err := h.b.Consume(first, spec, slog.New(slog.DiscardHandler), func(ctx context.Context, _ jetstream.Msg) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done() // the one in hand is held until shutdown
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := range n {
		if err := h.b.PublishJSON(context.Background(), subjects.Reserve, "", i); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no message handled")
	}
	time.Sleep(200 * time.Millisecond) // let the rest be pulled into the replica's buffer
	stop()
	<-done

	var got atomic.Int64
	second, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := h.b.Consume(second, spec, slog.New(slog.DiscardHandler), func(context.Context, jetstream.Msg) error {
		got.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if k := got.Load(); k < n {
			return errors.Newf("%d of %d messages redelivered", k, n)
		}
		return nil
	})
}

// A direct get answered onto a work subject (its reply subject) is stored
// by the work stream as if published there; the consumer drops it unread,
// and handles what clients send.
func TestReplayedStoredMessageIsDropped(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.env.Jobs(t).Create(ctx, domain.Job{ID: "stored", State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int64
	spec := bus.ConsumerSpec{Stream: subjects.StreamWork, Durable: "replay-test", Filter: subjects.Reserve}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := h.b.Consume(cctx, spec, slog.New(slog.DiscardHandler), func(context.Context, jetstream.Msg) error {
		handled.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	get := "$JS.API.DIRECT.GET.KV_" + subjects.BucketJobs + ".$KV." + subjects.BucketJobs + ".stored"
	if err := h.b.NC.PublishRequest(get, subjects.Reserve, nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if n := h.terminated(t, "replay-test", telemetry.TermInvalid); n != 1 {
			return errors.Newf("%d messages terminated as invalid, want the replayed one", n)
		}
		return nil
	})
	if err := h.b.PublishJSON(ctx, subjects.Reserve, "", 1); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if n := handled.Load(); n != 1 {
			return errors.Newf("%d messages handled, want the client's one only", n)
		}
		return nil
	})
}

// A core NATS handler served through Serve gets what clients send, never
// a stored message JetStream answered a direct get with onto its subject.
func TestServeDropsReplayedMessages(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.env.Jobs(t).Create(ctx, domain.Job{ID: "stored", State: domain.StatePending, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	const subject = "lockstep.v1.admin.serve-test"
	var got atomic.Int64
	sub, err := h.b.Serve(subject, "", func(m *nats.Msg) { got.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	get := "$JS.API.DIRECT.GET.KV_" + subjects.BucketJobs + ".$KV." + subjects.BucketJobs + ".stored"
	if err := h.b.NC.PublishRequest(get, subject, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.b.NC.Publish(subject, []byte("a client's")); err != nil {
		t.Fatal(err)
	}
	if err := h.b.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if n := got.Load(); n != 1 {
			return errors.Newf("%d messages handled, want the client's one", n)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // the direct get's answer, had it come through
	if n := got.Load(); n != 1 {
		t.Errorf("%d messages handled, want the client's one only", n)
	}
}
