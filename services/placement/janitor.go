package placement

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// janitorEvery is how often the leader purges the streams of foreign
// messages (bus.ForeignSubjects). A clean pass is one read per stream and
// filter.
const janitorEvery = 5 * time.Second

// startJanitor purges foreign messages from every stream, now and every
// janitorEvery, until ctx (the leader's term) ends; like retention, only
// the leader does it. Finding some means that someone allowed on the bus
// redirected deliveries onto a stream's subjects, so each find is a
// warning. The returned func stops it and waits.
func startJanitor(ctx context.Context, b *bus.Bus, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		purger := b.NewForeignPurger()
		purge := func() {
			found, err := purger.Purge(ctx)
			for _, p := range found {
				log.Warn("purged messages redirected onto another stream's subjects (a pull or get whose reply named them)",
					"stream", p.Stream, "subjects", p.Filter, "lastSubject", p.Example)
			}
			if err != nil && ctx.Err() == nil {
				log.Warn("purging foreign messages from the streams failed; the next pass retries", "err", err)
			}
		}
		purge()
		clock.Every(ctx, janitorEvery, purge)
	}()
	return func() { cancel(); wg.Wait() }
}
