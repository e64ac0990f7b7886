package bus

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
)

// readerIdle is how long the server keeps a reader's consumer once nothing
// pulls from it: the backstop for a reader that never closed (a killed
// CLI, a dropped connection). It must outlast a pull that waits for new
// messages (nats.go's default pull expiry is 30 s), or a quiet follow
// would lose its consumer.
const readerIdle = time.Minute

// readerCloseTimeout bounds the delete Close sends: the caller's context
// is usually what ended, so Close cannot take it.
const readerCloseTimeout = 2 * time.Second

// Reader is a consumer that one caller reads part of a stream through,
// deleted when the caller is done with it.
//
// A consumer left to the server's clean-up stays for its inactive
// threshold (five minutes for nats.go's ordered consumers), and a stream
// takes a bounded number of consumers (ReadersPerStream): a dashboard or a
// script polling job histories would fill the cap, after which every read
// of the stream, and every service consumer created on it, is refused.
type Reader struct {
	jetstream.Consumer
	js     jetstream.JetStream
	stream string
}

// Snapshot opens a Reader for reading what a stream holds in batches
// (Fetch, FetchNoWait), polled again for more as the caller likes. It is
// one plain consumer without acknowledgements, so each fetch goes on
// where the last stopped; an ordered consumer would create a new consumer
// on the server for every fetch. Give one filter as FilterSubject: only
// then does it go in the create request's subject, which is what a
// user's permission to read names (see auth.consumerOn).
func (b *Bus) Snapshot(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) (*Reader, error) {
	cfg.AckPolicy = jetstream.AckNonePolicy
	cfg.MemoryStorage = true
	cfg.InactiveThreshold = idleBound(cfg.InactiveThreshold)
	cons, err := b.JS.CreateConsumer(ctx, stream, cfg)
	return b.reader(stream, cons, err)
}

// Follow opens a Reader for following a stream as messages arrive
// (Messages, Consume): an ordered consumer, which re-creates itself from
// where it was when it misses a message or the server loses it.
func (b *Bus) Follow(ctx context.Context, stream string, cfg jetstream.OrderedConsumerConfig) (*Reader, error) {
	cfg.InactiveThreshold = idleBound(cfg.InactiveThreshold)
	cons, err := b.JS.OrderedConsumer(ctx, stream, cfg)
	return b.reader(stream, cons, err)
}

// idleBound is the inactive threshold a reader's consumer gets: the one
// asked for, unless none or one the leader's janitor would take for a
// squatter's (see squatting).
func idleBound(asked time.Duration) time.Duration {
	if asked <= 0 || asked > readerMaxIdle {
		return readerIdle
	}
	return asked
}

// reader wraps a consumer just created on stream, or says why it could
// not be: with what to do when the server's cap on consumers refused it.
func (b *Bus) reader(stream string, cons jetstream.Consumer, err error) (*Reader, error) {
	if err == nil {
		return &Reader{Consumer: cons, js: b.JS, stream: stream}, nil
	}
	err = errors.Wrapf(err, "open a consumer on stream %s", stream)
	if errors.Is(err, jetstream.ErrMaximumConsumersLimit) {
		return nil, errors.WithHint(err, "the NATS server holds as many consumers on this stream as it takes "+
			"(the services' --readers-per-stream, at most the account's max_consumers; the server's "+
			"default_max_consumers, 1,000, on a stream last created or updated without it); each running "+
			"`submit --wait`, `logs -f` and dashboard stream holds one: raise the limit, or follow fewer jobs at once")
	}
	return nil, err
}

// Close deletes the reader's consumer on the server. It is best effort: a
// consumer it could not delete goes after readerIdle.
func (r *Reader) Close() {
	info := r.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), readerCloseTimeout)
	defer cancel()
	_ = r.js.DeleteConsumer(ctx, r.stream, info.Name)
}
