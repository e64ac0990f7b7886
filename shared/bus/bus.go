// Package bus wraps NATS JetStream for Lockstep's services: connecting,
// declaring streams, publishing with de-duplication IDs, and consuming with
// ack-after-effect semantics.
package bus

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/events"
	"github.com/lockstep-dev/lockstep/shared/subjects"
)

// Bus is one NATS connection with its JetStream context.
type Bus struct {
	NC *nats.Conn
	JS jetstream.JetStream
}

// Connect dials NATS. name identifies the client (service and node) in
// server monitoring. The connection reconnects forever; callers close it.
func Connect(ctx context.Context, url, name string) (*Bus, error) {
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.RetryOnFailedConnect(false),
	)
	if err != nil {
		return nil, errors.Wrapf(err, "connect to nats at %s", url)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, errors.Wrap(err, "jetstream context")
	}
	return &Bus{NC: nc, JS: js}, nil
}

// Close drains and closes the connection.
func (b *Bus) Close() {
	if b != nil && b.NC != nil {
		_ = b.NC.Drain()
	}
}

// PublishJSON publishes v as JSON to a JetStream subject with a
// de-duplication ID (empty for none) and waits for the stream's ack.
func (b *Bus) PublishJSON(ctx context.Context, subject, msgID string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return errors.Wrapf(err, "encode message for %s", subject)
	}
	msg := nats.NewMsg(subject)
	msg.Data = data
	if msgID != "" {
		msg.Header.Set(subjects.HeaderMsgID, msgID)
	}
	ctx, cancel := withDefaultTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.JS.PublishMsg(ctx, msg); err != nil {
		return errors.Wrapf(err, "publish to %s", subject)
	}
	return nil
}

// PublishEvent publishes one event on its subject with its dedup ID.
func (b *Bus) PublishEvent(ctx context.Context, ev events.Event) error {
	return b.PublishJSON(ctx, ev.Subject(), ev.DedupID(), ev)
}

// PublishEventAsync starts publishing an event and returns a function that
// waits for the stream's ack. It lets a caller overlap the announcement with
// other work that does not depend on it.
func (b *Bus) PublishEventAsync(ctx context.Context, ev events.Event) func() error {
	data, err := json.Marshal(ev)
	if err != nil {
		return func() error { return errors.Wrapf(err, "encode %s event", ev.Type) }
	}
	msg := nats.NewMsg(ev.Subject())
	msg.Data = data
	msg.Header.Set(subjects.HeaderMsgID, ev.DedupID())
	fut, err := b.JS.PublishMsgAsync(msg)
	if err != nil {
		return func() error { return errors.Wrapf(err, "publish to %s", ev.Subject()) }
	}
	return func() error {
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
