package bus

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
)

// readerMaxIdle is the longest a consumer on a stream people read may
// stay once idle (its inactive threshold). Readers take readerIdle;
// nats.go's ordered consumers, five minutes.
const readerMaxIdle = 10 * time.Minute

// Squatter is a consumer on a stream people read that no reader makes: a
// durable one, or one that the server would keep idle for longer than
// readerMaxIdle.
type Squatter struct {
	Stream, Consumer, Why string
}

// squatting says why a consumer on a stream people read is a squatter,
// or "" when it is not. Whoever may read such a stream may create
// consumers on it with any configuration (the server's permissions name
// the subjects a consumer reads, not whether it is durable), and the
// server caps consumers per stream: a user's durables, never deleted,
// could fill the cap, after which no service could start the watch of
// the job records it needs. The services keep their own durables on the
// work streams, never here.
func squatting(cfg jetstream.ConsumerConfig) string {
	switch {
	case cfg.Durable != "":
		return "durable"
	case cfg.InactiveThreshold > readerMaxIdle:
		return "kept " + cfg.InactiveThreshold.String() + " when idle, over " + readerMaxIdle.String()
	}
	return ""
}

// RemoveSquatters deletes the squatters on streams and returns them.
func (b *Bus) RemoveSquatters(ctx context.Context, streams []string) ([]Squatter, error) {
	var out []Squatter
	for _, name := range streams {
		s, err := b.JS.Stream(ctx, name)
		if err != nil {
			return out, errors.Wrapf(err, "list consumers of %s", name)
		}
		list := s.ListConsumers(ctx)
		var found []Squatter
		for info := range list.Info() {
			if why := squatting(info.Config); why != "" {
				found = append(found, Squatter{Stream: name, Consumer: info.Name, Why: why})
			}
		}
		if err := list.Err(); err != nil {
			return out, errors.Wrapf(err, "list consumers of %s", name)
		}
		for _, sq := range found {
			if err := s.DeleteConsumer(ctx, sq.Consumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return out, errors.Wrapf(err, "delete consumer %s of %s", sq.Consumer, name)
			}
			out = append(out, sq)
		}
	}
	return out, nil
}
