package placement

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// janitorEvery is how often the leader purges the streams of foreign
// messages (bus.ForeignSubjects). A clean pass is one read per stream and
// filter.
const janitorEvery = 5 * time.Second

// squattersEvery is how often the leader removes the consumers no reader
// makes from the streams people read (bus.RemoveSquatters): a listing of
// each stream's consumers.
const squattersEvery = 30 * time.Second

// startJanitor purges foreign messages from every stream, now and every
// janitorEvery, and removes squatting consumers from the streams people
// read, now and every squattersEvery, until ctx (the leader's term) ends;
// like retention, only the leader does it. Either find means that someone
// allowed on the bus misused it, so each is a warning. The returned func
// stops both and waits.
func startJanitor(ctx context.Context, b *bus.Bus, log *slog.Logger) (stop func()) {
	return startJanitorEvery(ctx, b, log, janitorEvery, squattersEvery)
}

// startJanitorEvery is startJanitor with its two periods given.
func startJanitorEvery(ctx context.Context, b *bus.Bus, log *slog.Logger, purgeEvery, evictEvery time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	repeat := func(every time.Duration, pass func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pass()
			clock.Every(ctx, every, pass)
		}()
	}
	purger := b.NewForeignPurger()
	repeat(purgeEvery, func() {
		found, err := purger.Purge(ctx)
		for _, p := range found {
			log.Warn("purged messages redirected onto another stream's subjects (a pull or get whose reply named them)",
				"stream", p.Stream, "subjects", p.Filter, "lastSubject", p.Example)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("purging foreign messages from the streams failed; the next pass retries", "err", err)
		}
	})
	repeat(evictEvery, func() {
		removed, err := b.RemoveSquatters(ctx, subjects.ReadableStreams())
		for _, sq := range removed {
			log.Warn("removed a consumer no reader makes from a stream people read (it counts against the server's cap on consumers per stream)",
				"stream", sq.Stream, "consumer", sq.Consumer, "why", sq.Why)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("removing squatting consumers failed; the next pass retries", "err", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}
