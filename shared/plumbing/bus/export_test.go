package bus

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ConsumeBound runs Consume's workers over a consumer bound elsewhere,
// with the given pull heartbeat, so that a test can delete the consumer
// before the first pull reaches the server.
func (b *Bus) ConsumeBound(ctx context.Context, spec ConsumerSpec, cons jetstream.Consumer, log *slog.Logger, h Handler, heartbeat time.Duration) (<-chan struct{}, error) {
	return b.consume(ctx, spec, cons, log, h, heartbeat)
}
