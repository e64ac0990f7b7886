package bus

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/errs"
)

// Handler processes one message. Returning nil acks it; an error marked
// permanent (errs.MarkPermanent) terminates it; any other error naks it for
// redelivery with backoff. Handlers must be idempotent: a message can be
// delivered again after a crash.
type Handler func(ctx context.Context, msg jetstream.Msg) error

// ConsumerSpec names a durable consumer.
type ConsumerSpec struct {
	Stream  string
	Durable string
	Filter  string
	// AckWait is how long a message may be in flight before redelivery.
	AckWait time.Duration
	// Workers is how many messages this replica handles at once (default 1).
	// Handlers must then tolerate concurrent calls, as they must anyway for
	// replicas.
	Workers int
}

// Consume runs h over a durable pull consumer until ctx ends. Replicas of a
// service bind the same durable and so share the work. It returns once the
// consumer is bound; processing continues in the background and stops
// when ctx is cancelled. done is closed when the loop has exited.
func (b *Bus) Consume(ctx context.Context, spec ConsumerSpec, log *slog.Logger, h Handler) (done <-chan struct{}, err error) {
	ackWait := spec.AckWait
	if ackWait == 0 {
		ackWait = 30 * time.Second
	}
	cctx, cancel := withDefaultTimeout(ctx, 30*time.Second)
	defer cancel()
	cons, err := b.JS.CreateOrUpdateConsumer(cctx, spec.Stream, jetstream.ConsumerConfig{
		Durable:       spec.Durable,
		FilterSubject: spec.Filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1,
		MaxAckPending: 256,
	})
	if err != nil {
		return nil, errors.Wrapf(err, "bind consumer %s on %s", spec.Durable, spec.Stream)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(64))
	if err != nil {
		return nil, errors.Wrapf(err, "start consumer %s", spec.Durable)
	}
	finished := make(chan struct{})
	go func() {
		<-ctx.Done()
		it.Stop()
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
					log.Warn("consumer fetch failed", "consumer", spec.Durable, "err", err)
					continue
				}
				settle(ctx, log, spec.Durable, msg, h(ctx, msg))
			}
		}()
	}
	go func() {
		wg.Wait()
		close(finished)
	}()
	return finished, nil
}

func settle(ctx context.Context, log *slog.Logger, durable string, msg jetstream.Msg, err error) {
	switch {
	case err == nil:
		_ = msg.Ack()
	case errs.IsPermanent(err):
		log.Warn("dropping message", "consumer", durable, "subject", msg.Subject(), "err", err)
		_ = msg.TermWithReason(err.Error())
	case ctx.Err() != nil:
		// Shutting down: let the message be redelivered to someone else.
		_ = msg.Nak()
	default:
		n := uint64(1)
		if md, mdErr := msg.Metadata(); mdErr == nil {
			n = md.NumDelivered
		}
		delay := min(time.Duration(n)*200*time.Millisecond, 5*time.Second)
		log.Warn("message failed, will retry", "consumer", durable, "subject", msg.Subject(), "delivery", n, "err", err)
		_ = msg.NakWithDelay(delay)
	}
}
