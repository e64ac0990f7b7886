package bus

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Handler processes one message. ctx carries the message's CONSUMER span,
// a child of the span that published it (its trace context travels in the
// headers). Returning nil acks it; an error marked
// permanent (errs.MarkPermanent) terminates it; any other error naks it for
// redelivery after RetryDelay, until the consumer's MaxDeliver: an error on
// the last delivery terminates it too. Every termination is logged,
// counted (lockstep.messages.terminated) and passed to the consumer's
// GiveUp. Handlers must be idempotent: a message can be delivered again
// after a crash.
type Handler func(ctx context.Context, msg jetstream.Msg) error

// MaxAckPending bounds the messages of one durable consumer in flight
// (delivered, not yet acknowledged) across all replicas: enough for a few
// replicas of the gang service at their default of 128 workers each.
const MaxAckPending = 1024

// ConsumerSpec names a durable consumer.
type ConsumerSpec struct {
	Stream  string
	Durable string
	Filter  string
	// Filters, when set, replaces Filter with several subjects (a
	// request subject and its per-user form).
	Filters []string
	// AckWait is how long a first delivery may be in flight without word
	// from its replica before the server redelivers it (default 30 s);
	// later deliveries get a little longer each (the consumer's BackOff).
	// A handler at work says so every third of it (InProgress), so the
	// wait is what a replica that died costs, not a bound on handling.
	AckWait time.Duration
	// MaxHandle bounds how long a handler keeps its message from
	// redelivery by saying it is at work (default DefaultMaxHandle): one
	// still running then is taken for hung, and the message goes to
	// another delivery after AckWait.
	MaxHandle time.Duration
	// Workers is how many messages this replica handles at once (default 1).
	// Handlers must then tolerate concurrent calls, as they must anyway for
	// replicas.
	Workers int
	// MaxDeliver bounds deliveries of one message (default
	// DefaultMaxDeliver); after the last one fails or times out the
	// message is terminated.
	MaxDeliver int
	// GiveUp, when set, records a terminated message where its sender
	// will see it.
	GiveUp GiveUp
}

// filter is the single filter subject, unless Filters says several (the
// server takes one or the other).
func filter(s ConsumerSpec) string {
	if len(s.Filters) > 0 {
		return ""
	}
	return s.Filter
}

// DefaultMaxHandle is ConsumerSpec.MaxHandle's default: well past any
// handler's work, an etcd election and a request's retries included.
const DefaultMaxHandle = 2 * time.Minute

func (s ConsumerSpec) ackWait() time.Duration {
	return cmp.Or(s.AckWait, 30*time.Second)
}

func (s ConsumerSpec) maxHandle() time.Duration {
	return cmp.Or(s.MaxHandle, DefaultMaxHandle)
}

func (s ConsumerSpec) maxDeliver() int {
	if s.MaxDeliver <= 0 {
		return DefaultMaxDeliver
	}
	return s.MaxDeliver
}

// Consume runs h over a durable pull consumer until ctx ends. Replicas of a
// service bind the same durable and so share the work. It returns once the
// consumer is bound; processing continues in the background and stops
// when ctx is cancelled. done is closed when the loop has exited.
func (b *Bus) Consume(ctx context.Context, spec ConsumerSpec, log *slog.Logger, h Handler) (done <-chan struct{}, err error) {
	ackWait := spec.ackWait()
	cctx, cancel := withDefaultTimeout(ctx, 30*time.Second)
	defer cancel()
	cons, err := b.JS.CreateOrUpdateConsumer(cctx, spec.Stream, jetstream.ConsumerConfig{
		Durable:        spec.Durable,
		FilterSubject:  filter(spec),
		FilterSubjects: spec.Filters,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        ackWait,
		MaxDeliver:     spec.maxDeliver(),
		BackOff:        backOff(ackWait, spec.maxDeliver()),
		MaxAckPending:  MaxAckPending,
	})
	if err != nil {
		return nil, errors.Wrapf(err, "bind consumer %s on %s", spec.Durable, spec.Stream)
	}
	adv, err := b.watchMaxDeliveries(ctx, log, spec)
	if err != nil {
		return nil, err
	}
	done, err = b.consume(ctx, spec, cons, log, h, pullHeartbeat)
	if err != nil {
		_ = adv.Unsubscribe()
		return nil, err
	}
	go func() {
		<-done
		_ = adv.Unsubscribe()
	}()
	return done, nil
}

// pullHeartbeat is how often the server says it still holds a pull
// request. Two missed in a row tell the iterator its request is gone, and
// the loop then asks whether the consumer itself still exists.
const pullHeartbeat = 5 * time.Second

// consume runs the workers of Consume over a bound consumer.
func (b *Bus) consume(ctx context.Context, spec ConsumerSpec, cons jetstream.Consumer, log *slog.Logger, h Handler, heartbeat time.Duration) (<-chan struct{}, error) {
	it, err := cons.Messages(jetstream.PullMaxMessages(64), jetstream.PullHeartbeat(heartbeat))
	if err != nil {
		return nil, errors.Wrapf(err, "start consumer %s", spec.Durable)
	}
	finished := make(chan struct{})
	b.setConsumer(spec.Durable, true)
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		// Drain, not Stop: Stop would drop the messages already pulled
		// (up to 64) unanswered, so that the server held them for AckWait
		// (30 s) before anyone else had them; drained, each comes out of
		// Next below and is nakked at once.
		it.Drain()
	}()
	var wg sync.WaitGroup
	for range max(spec.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// MessagesContext.Next is safe for concurrent use.
				msg, err := it.Next()
				if err != nil {
					if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
						return
					}
					if consumerGone(ctx, cons) {
						// The server answers a pull for a deleted consumer
						// with "Consumer Deleted" only when the deletion
						// finds the pull waiting; deleted a moment before
						// the pull arrived, it answers nothing, and without
						// this check the loop would wait for heartbeats
						// for ever.
						log.Error("consumer deleted under this service; stopping it", "consumer", spec.Durable, "err", err)
						it.Stop()
						return
					}
					log.Warn("consumer fetch failed", "consumer", spec.Durable, "err", err)
					continue
				}
				if ctx.Err() != nil {
					_ = msg.Nak() // shutting down: back to another replica now
					continue
				}
				b.handle(ctx, log, spec, msg, h)
			}
		}()
	}
	go func() {
		wg.Wait()
		b.setConsumer(spec.Durable, false)
		close(finished)
	}()
	return finished, nil
}

// consumerGone says whether the server no longer has cons or its stream;
// false when it could not tell (a lost connection is not a deletion).
func consumerGone(ctx context.Context, cons jetstream.Consumer) bool {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := cons.Info(ictx)
	return errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound)
}

// WaitConsumers returns once every consumer in done (by name) has
// stopped: when ctx ends (nil), or when one stops on its own while ctx has
// not ended (an error naming it). A consumer stops on its own when its
// durable or stream is deleted or the connection closes for good; the
// service must then fail (and be restarted) rather than go on
// half-working, or exit as if asked. On that error it calls stop (which
// ends ctx) and waits for the others' handlers, so that none is still at
// work while the service closes its connections.
func WaitConsumers(ctx context.Context, stop context.CancelFunc, done map[string]<-chan struct{}) error {
	stopped := make(chan string, len(done))
	for name, ch := range done {
		go func() {
			<-ch
			stopped <- name
		}()
	}
	var err error
	for range len(done) {
		name := <-stopped
		if err == nil && ctx.Err() == nil {
			err = errors.Newf("the %s consumer stopped", name)
			stop()
		}
	}
	return err
}

// handle runs h on one message inside its CONSUMER span, then settles it.
func (b *Bus) handle(ctx context.Context, log *slog.Logger, spec ConsumerSpec, msg jetstream.Msg, h Handler) {
	hdr := msg.Headers()
	mctx, span := telemetry.StartProcess(telemetry.Extract(ctx, hdr), b.tr(), msg.Subject(), spec.Durable,
		hdr.Get(subjects.HeaderMsgID), len(msg.Data()))
	if Replayed(hdr) {
		b.dropReplayed(mctx, log, spec, msg, hdr.Get(jetstream.StreamHeader))
		telemetry.End(span, errors.New("a stored message replayed onto a work subject"))
		return
	}
	working := keepInProgress(msg, spec.ackWait()/3, spec.maxHandle())
	err := h(mctx, msg)
	working()
	b.settle(mctx, log, spec, msg, err)
	if errs.IsPermanent(err) || ctx.Err() == nil {
		telemetry.End(span, err)
	} else {
		span.End() // shutting down: not the message's fault
	}
}

// Replayed says whether a message is JetStream's answer from a stream (a
// direct get's), sent onto the subject its request named as reply, rather
// than something a client published there (see dropReplayed). Every
// handler of a work subject ignores such messages: Consume's, and core
// NATS ones through Serve.
func Replayed(h nats.Header) bool { return h.Get(jetstream.StreamHeader) != "" }

// Serve subscribes h to a core NATS subject, in queue group queue unless
// it is "", and hands it only what a client sent there: a stored message
// JetStream answered a direct get with onto that subject (Replayed) is
// dropped unread, as Consume drops it.
func (b *Bus) Serve(subject, queue string, h nats.MsgHandler) (*nats.Subscription, error) {
	served := func(m *nats.Msg) {
		if !Replayed(m.Header) {
			h(m)
		}
	}
	sub, err := b.NC.QueueSubscribe(subject, queue, served)
	return sub, errors.Wrapf(err, "subscribe to %s", subject)
}

// dropReplayed terminates a message that JetStream answered from a
// stream (a direct get, which the server sends to whatever reply subject
// the request named, and which a work stream then stores as if published
// there): anyone who may read the jobs bucket could otherwise put a stored
// record on another user's submit or cancel subject, or on a node's report
// subject. No client sends the header; the server sets it on such answers.
// Dropped without the consumer's GiveUp: the subject's user sent nothing.
func (b *Bus) dropReplayed(ctx context.Context, log *slog.Logger, spec ConsumerSpec, msg jetstream.Msg, from string) {
	log.WarnContext(ctx, "dropping message: a stored message replayed onto a work subject, not sent by a client",
		"consumer", spec.Durable, "subject", msg.Subject(), "stream", from, "storedAs", msg.Headers().Get(jetstream.SubjectHeader))
	b.terminated.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(
		telemetry.LabelConsumer.String(spec.Durable), telemetry.LabelReason.String(telemetry.TermInvalid)))
	_ = msg.TermWithReason("replayed from stream " + truncate(from, maxTermReason))
}

func (b *Bus) setConsumer(durable string, running bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.consumers == nil {
		b.consumers = map[string]bool{}
	}
	b.consumers[durable] = running
}

// Ready reports whether the connection is up and every consumer started on
// it still runs: a readiness check.
func (b *Bus) Ready(context.Context) error {
	if !b.NC.IsConnected() {
		return errors.Newf("nats: %s", b.NC.Status())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for d, running := range b.consumers {
		if !running {
			return errors.Newf("consumer %s stopped", d)
		}
	}
	return nil
}

// keepInProgress tells the server every period that msg is still being
// handled, for at most until, and returns what stops it. A timer, not a
// goroutine: most handlers answer long before the first period.
func keepInProgress(msg jetstream.Msg, every, until time.Duration) (stop func()) {
	var (
		mu      sync.Mutex
		stopped bool
		t       *time.Timer
	)
	deadline := time.Now().Add(until)
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(every, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || time.Now().After(deadline) {
			return
		}
		_ = msg.InProgress()
		t.Reset(every)
	})
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		t.Stop()
	}
}
