package bus

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// DefaultMaxDeliver bounds how often one message is delivered. With
// RetryDelay between failures that is about two minutes of retrying: long
// enough to ride out an etcd leader election or a NATS restart, short
// enough that a message no handler can process cannot hold an in-flight
// slot for long. Unbounded redelivery let 1,100 poison submissions fill
// admission's 1,024 slots and stall every other job.
const DefaultMaxDeliver = 10

// maxRetryDelay caps the wait between two deliveries of a failing message.
const maxRetryDelay = 30 * time.Second

// RetryDelay is how long a message whose handler failed on delivery n
// waits before delivery n+1: 250 ms, doubling, at most 30 s. (With a
// consumer BackOff the server adds backOff's growth to a nak's delay, so
// the real wait is between one and two times this.)
func RetryDelay(n uint64) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 8 {
		return maxRetryDelay
	}
	return min((250*time.Millisecond)<<(n-1), maxRetryDelay)
}

// backOff is the consumer's BackOff: how long delivery i+1 may stay
// unacknowledged before the server delivers it again. The first is the ack
// wait; each later one adds the retry delay, so a handler that crashed or
// hung is retried on the same widening schedule as one that failed.
func backOff(ackWait time.Duration, maxDeliver int) []time.Duration {
	out := make([]time.Duration, maxDeliver)
	for i := range out {
		out[i] = ackWait
		if i > 0 {
			out[i] += RetryDelay(uint64(i))
		}
	}
	return out
}

// Undeliverable is a message a consumer gives up on.
type Undeliverable struct {
	Subject    string
	Data       []byte
	Header     nats.Header
	StreamSeq  uint64
	Timestamp  time.Time // when the stream stored it
	Deliveries uint64
	// Reason is telemetry.TermInvalid, TermExhausted or TermTimedOut.
	Reason string
	// Err is why: the handler's last error.
	Err error
}

// GiveUp leaves a trace of a dropped message where its sender looks (for
// a submission, a rejected event). It runs before the message is
// terminated. Its error is logged and the message terminated anyway:
// retrying the give-up would be the unbounded loop it exists to end.
type GiveUp func(ctx context.Context, m Undeliverable) error

// maxTermReason bounds the reason sent with a Term (it is copied into the
// server's advisory).
const maxTermReason = 256

// settle acknowledges, retries or terminates one handled message.
func (b *Bus) settle(ctx context.Context, log *slog.Logger, spec ConsumerSpec, msg jetstream.Msg, err error) {
	switch {
	case err == nil:
		_ = msg.Ack()
	case errs.IsPermanent(err):
		b.giveUp(ctx, log, spec, undeliverable(msg, telemetry.TermInvalid, err))
		_ = msg.TermWithReason(truncate(err.Error(), maxTermReason))
	case ctx.Err() != nil:
		// Shutting down: let the message be redelivered to someone else.
		_ = msg.Nak()
	default:
		u := undeliverable(msg, telemetry.TermExhausted, err)
		if u.Deliveries >= uint64(spec.maxDeliver()) {
			b.giveUp(ctx, log, spec, u)
			_ = msg.TermWithReason(truncate("gave up: "+err.Error(), maxTermReason))
			return
		}
		log.WarnContext(ctx, "message failed, will retry", "consumer", spec.Durable, "subject", msg.Subject(),
			"delivery", u.Deliveries, "maxDeliver", spec.maxDeliver(), "err", err)
		_ = msg.NakWithDelay(RetryDelay(u.Deliveries))
	}
}

func undeliverable(msg jetstream.Msg, reason string, err error) Undeliverable {
	u := Undeliverable{Subject: msg.Subject(), Data: msg.Data(), Header: msg.Headers(), Deliveries: 1, Reason: reason, Err: err}
	if md, mdErr := msg.Metadata(); mdErr == nil {
		u.StreamSeq, u.Timestamp, u.Deliveries = md.Sequence.Stream, md.Timestamp, md.NumDelivered
	}
	return u
}

// giveUp leaves the trace of a dropped message: a log line, the counter
// and the consumer's own GiveUp.
func (b *Bus) giveUp(ctx context.Context, log *slog.Logger, spec ConsumerSpec, u Undeliverable) {
	log.WarnContext(ctx, "dropping message", "consumer", spec.Durable, "subject", u.Subject, "streamSeq", u.StreamSeq,
		"deliveries", u.Deliveries, "reason", u.Reason, "err", u.Err)
	b.terminated.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(
		telemetry.LabelConsumer.String(spec.Durable), telemetry.LabelReason.String(u.Reason)))
	if spec.GiveUp == nil {
		return
	}
	// The trace must be left even while the service shuts down.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := spec.GiveUp(gctx, u); err != nil {
		log.ErrorContext(ctx, "could not record a dropped message", "consumer", spec.Durable, "streamSeq", u.StreamSeq, "err", err)
	}
}

// maxDeliveriesAdvisory is the part of the server's advisory we read.
type maxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// watchMaxDeliveries handles messages whose every delivery timed out (the
// handler hung, or its replica died each time): the server stops
// delivering them and says so in an advisory, but a work-queue stream
// would keep them for ever, unseen. One replica (a queue group per
// durable) gives each up like a failed one and deletes it. An advisory
// sent while no replica runs is lost; the message then stays in the
// stream, undelivered.
func (b *Bus) watchMaxDeliveries(ctx context.Context, log *slog.Logger, spec ConsumerSpec) (*nats.Subscription, error) {
	sub, err := b.Serve(subjects.MaxDeliveriesAdvisory(spec.Stream, spec.Durable), spec.Durable, func(m *nats.Msg) {
		var adv maxDeliveriesAdvisory
		if err := json.Unmarshal(m.Data, &adv); err != nil || adv.StreamSeq == 0 {
			log.Warn("malformed max-deliveries advisory", "consumer", spec.Durable, "err", err)
			return
		}
		if err := b.dropTimedOut(ctx, log, spec, adv); err != nil {
			log.Warn("could not drop a message past its max deliveries", "consumer", spec.Durable, "streamSeq", adv.StreamSeq, "err", err)
		}
	})
	return sub, errors.Wrapf(err, "watch max deliveries of %s", spec.Durable)
}

func (b *Bus) dropTimedOut(ctx context.Context, log *slog.Logger, spec ConsumerSpec, adv maxDeliveriesAdvisory) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := b.JS.Stream(ctx, spec.Stream)
	if err != nil {
		return errors.Wrapf(err, "stream %s", spec.Stream)
	}
	raw, err := stream.GetMsg(ctx, adv.StreamSeq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil // acknowledged after all
	}
	if err != nil {
		return errors.Wrapf(err, "get message %d", adv.StreamSeq)
	}
	b.giveUp(ctx, log, spec, Undeliverable{
		Subject: raw.Subject, Data: raw.Data, Header: raw.Header, StreamSeq: raw.Sequence, Timestamp: raw.Time,
		Deliveries: adv.Deliveries, Reason: telemetry.TermTimedOut,
		Err: errors.Newf("no delivery of %d was acknowledged in time", adv.Deliveries),
	})
	if stream.CachedInfo().Config.Retention != jetstream.WorkQueuePolicy {
		return nil // a history stream keeps its messages
	}
	if err := stream.DeleteMsg(ctx, adv.StreamSeq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return errors.Wrapf(err, "delete message %d", adv.StreamSeq)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
