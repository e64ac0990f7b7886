// Package bus wraps NATS JetStream for Lockstep's services: connecting,
// declaring streams, publishing with de-duplication IDs, and consuming with
// ack-after-effect semantics.
package bus

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Bus is one NATS connection with its JetStream context.
type Bus struct {
	NC *nats.Conn
	JS jetstream.JetStream

	tracer trace.Tracer
	meter  metric.Meter
	// terminated counts messages consumers gave up on.
	terminated metric.Int64Counter
	mu         sync.Mutex
	// consumers records which durable consumers of this connection are
	// running, for readiness.
	consumers map[string]bool
	// conn is how Connect proves who it is, identity who that is (see
	// connect.go).
	conn     credentials
	identity auth.Identity
	// asyncErr, when set, receives the errors the server sends outside any
	// request (permission violations, slow consumer).
	asyncErr func(error)
}

// Option adjusts a Bus.
type Option func(*Bus)

// WithTracerProvider makes the bus trace every publish (PRODUCER span,
// context injected into the headers) and every consumed message (CONSUMER
// span, child of the publisher's) with tp. Without it the bus uses the
// global provider, a no-op unless the process installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(b *Bus) {
		if tp != nil {
			b.tracer = tp.Tracer(telemetry.ScopeName)
		}
	}
}

// WithMeter makes the bus count the messages its consumers terminate
// (lockstep.messages.terminated) on m. Without it the bus uses the global
// provider, a no-op unless the process installed one.
func WithMeter(m metric.Meter) Option {
	return func(b *Bus) {
		if m != nil {
			b.meter = m
		}
	}
}

// WithAsyncErrors hands the errors the server sends outside any request
// (a permissions violation, a slow consumer) to fn instead of the NATS
// client's default, which prints them to stderr. A client that explains
// the failed request itself (the CLI) passes a quiet fn.
func WithAsyncErrors(fn func(error)) Option {
	return func(b *Bus) { b.asyncErr = fn }
}

// Connect dials NATS. name identifies the client (service and node) in
// server monitoring. The connection reconnects forever; callers close it.
// Without WithCreds or WithTLS it connects anonymously in plain text, as
// to a server without auth.
func Connect(ctx context.Context, url, name string, opts ...Option) (*Bus, error) {
	b := &Bus{}
	for _, o := range opts {
		o(b)
	}
	natsOpts, id, err := b.conn.natsOptions()
	if err != nil {
		return nil, errors.Wrapf(err, "connect to nats at %s", url)
	}
	natsOpts = append(natsOpts,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.RetryOnFailedConnect(false),
	)
	if fn := b.asyncErr; fn != nil {
		natsOpts = append(natsOpts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { fn(err) }))
	}
	nc, err := nats.Connect(url, natsOpts...)
	if err != nil {
		return nil, errors.Wrapf(err, "connect to nats at %s", url)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, errors.Wrap(err, "jetstream context")
	}
	b.NC, b.JS, b.identity = nc, js, id
	if b.meter == nil {
		b.meter = otel.GetMeterProvider().Meter(telemetry.ScopeName)
	}
	if b.terminated, err = telemetry.NewTerminatedCounter(b.meter); err != nil {
		nc.Close()
		return nil, err
	}
	return b, nil
}

func (b *Bus) tr() trace.Tracer {
	if b.tracer != nil {
		return b.tracer
	}
	return otel.GetTracerProvider().Tracer(telemetry.ScopeName)
}

// Close drains and closes the connection.
func (b *Bus) Close() {
	if b != nil && b.NC != nil {
		_ = b.NC.Drain()
	}
}

// PublishJSON publishes v as JSON to a JetStream subject with a
// de-duplication ID (empty for none) and waits for the stream's ack. The
// trace context of ctx travels in the message's headers.
func (b *Bus) PublishJSON(ctx context.Context, subject, msgID string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return errors.Wrapf(err, "encode message for %s", subject)
	}
	return b.publish(ctx, subject, msgID, data)
}

func (b *Bus) publish(ctx context.Context, subject, msgID string, data []byte, attrs ...attribute.KeyValue) (err error) {
	ctx, span := telemetry.StartSend(ctx, b.tr(), subject, msgID, len(data), attrs...)
	defer func() { telemetry.End(span, err) }()
	msg := b.newMsg(ctx, subject, msgID, data)
	ctx, cancel := withDefaultTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.JS.PublishMsg(ctx, msg); err != nil {
		return errors.Wrapf(err, "publish to %s", subject)
	}
	return nil
}

// newMsg builds a message with its de-duplication ID and the trace context
// of ctx in its headers.
func (b *Bus) newMsg(ctx context.Context, subject, msgID string, data []byte) *nats.Msg {
	msg := nats.NewMsg(subject)
	msg.Data = data
	if msgID != "" {
		msg.Header.Set(subjects.HeaderMsgID, msgID)
	}
	telemetry.Inject(ctx, msg.Header)
	return msg
}

// eventAttrs describe an event on its send span.
func eventAttrs(ev events.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{telemetry.AttrEventType.String(string(ev.Type))}
	if ev.JobID != "" {
		attrs = append(attrs, telemetry.AttrJobID.String(ev.JobID), telemetry.AttrAttempt.Int(ev.Attempt))
	}
	if ev.Node != "" {
		attrs = append(attrs, telemetry.AttrNode.String(ev.Node))
	}
	return attrs
}

// PublishEvent publishes one event on its subject with its dedup ID.
func (b *Bus) PublishEvent(ctx context.Context, ev events.Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return errors.Wrapf(err, "encode %s event", ev.Type)
	}
	return b.publish(ctx, ev.Subject(), ev.DedupID(), data, eventAttrs(ev)...)
}

// PublishEventAsync starts publishing an event and returns a function that
// waits for the stream's ack. It lets a caller overlap the announcement with
// other work that does not depend on it. The send span ends when the
// returned function is called, which the caller must do.
func (b *Bus) PublishEventAsync(ctx context.Context, ev events.Event) func() error {
	data, err := json.Marshal(ev)
	if err != nil {
		return func() error { return errors.Wrapf(err, "encode %s event", ev.Type) }
	}
	sctx, span := telemetry.StartSend(ctx, b.tr(), ev.Subject(), ev.DedupID(), len(data), eventAttrs(ev)...)
	msg := b.newMsg(sctx, ev.Subject(), ev.DedupID(), data)
	fut, err := b.JS.PublishMsgAsync(msg)
	if err != nil {
		err = errors.Wrapf(err, "publish to %s", ev.Subject())
		telemetry.End(span, err)
		return func() error { return err }
	}
	return func() (err error) {
		defer func() { telemetry.End(span, err) }()
		ctx, cancel := withDefaultTimeout(ctx, 10*time.Second)
		defer cancel()
		select {
		case <-fut.Ok():
			return nil
		case err := <-fut.Err():
			return errors.Wrapf(err, "publish to %s", ev.Subject())
		case <-ctx.Done():
			return errors.Wrapf(ctx.Err(), "publish to %s", ev.Subject())
		}
	}
}

// withDefaultTimeout adds a deadline only when the caller set none.
func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
