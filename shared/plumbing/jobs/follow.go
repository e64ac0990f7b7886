package jobs

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// WatchStall is how long a follower's watch may deliver nothing while the
// bucket has newer records before it is restarted.
const WatchStall = 3 * time.Second

// Sink takes what Follow reads. Its methods are called from Follow's
// goroutine, one at a time.
type Sink interface {
	// Replay says a watch (re)started: the entries up to the next Current
	// are the latest of every key, deletion markers included, as the
	// bucket held them when the watch started.
	Replay()
	// Apply takes one entry, replayed or live.
	Apply(e Entry)
	// Current says the replay is complete; the entries that follow are
	// live changes.
	Current()
}

// EachEntry is a Sink that hands every entry to the function, replayed or
// live alike: for a follower that keeps its state in place (a replay
// re-applies every key) and need not know when it is current.
type EachEntry func(Entry)

// Replay does nothing.
func (EachEntry) Replay() {}

// Apply calls f.
func (f EachEntry) Apply(e Entry) { f(e) }

// Current does nothing.
func (EachEntry) Current() {}

var (
	errWatchEnded   = errors.New("job records watch ended")
	errWatchStalled = errors.New("job records watch stalled")
)

// Follow keeps one watch of the bucket for as long as ctx lasts and hands
// what it delivers to sink; it returns when ctx ends. The watch is
// re-created when it ends and restarted when it stalls: a watch is an
// ordered consumer on one NATS server, and when that server dies the
// client notices only after missed heartbeats (about 10 s), during which
// the follower would see no new records. Comparing what the watch
// delivered with the bucket's latest revision once a second catches that
// (and any other stall) within WatchStall. A watch that lags but moves is
// left alone.
//
// Every service that follows the job records does it through Follow: one
// way to replay, to recover and to notice a stall.
//
// A follower is owed each record's latest revision, not every revision: a
// watch starts at each key's last value, and the server may apply that
// start to writes made in the watch's first moments (on a loaded machine a
// record written twice then came at its second revision only).
func (s *Store) Follow(ctx context.Context, log *slog.Logger, sink Sink) {
	s.followWith(ctx, log, sink, false)
}

// followWith is Follow; with own, the entries of records this Store wrote
// carry their briefs (Entry.Own), once s.own.follow was called. Only one
// follower of a Store may take them: Active's.
func (s *Store) followWith(ctx context.Context, log *slog.Logger, sink Sink, own bool) {
	for ctx.Err() == nil {
		err := s.follow(ctx, log, sink, own)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, errWatchStalled):
			// Said by the watchdog, with the revisions; start again now.
		default:
			log.Warn("job records watch ended, following again", "err", err)
			clock.Sleep(ctx, time.Second)
		}
	}
}

// follow runs one watch until it ends, stalls or ctx ends.
func (s *Store) follow(ctx context.Context, log *slog.Logger, sink Sink, own bool) error {
	// Whatever the bucket holds at this revision, the replay delivers (or
	// a purge removed: a delete marker purged after the bucket's last
	// write leaves that write's revision undeliverable), so a replayed
	// watch is current up to it.
	start, err := s.LastRevision(ctx)
	if err != nil {
		start = 0 // the watchdog then goes by what is delivered alone
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w, err := s.kv.WatchAll(wctx)
	if err != nil {
		return errors.Wrap(err, "watch job records")
	}
	defer func() { _ = w.Stop() }()
	var delivered atomic.Uint64
	go s.watchdog(wctx, log, &delivered, cancel)
	sink.Replay()
	for {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil
			}
			return context.Cause(wctx)
		case e, ok := <-w.Updates():
			if !ok {
				return errWatchEnded
			}
			if e == nil {
				sink.Current()
				raise(&delivered, start)
				continue
			}
			entry := Entry{Key: e.Key(), Revision: e.Revision(), Created: e.Created(), Value: e.Value(),
				Deleted: e.Operation() != jetstream.KeyValuePut}
			if own {
				if brief, ok := s.own.take(entry.Key, entry.Value); ok && !entry.Deleted {
					entry.Own = &brief
				}
			}
			sink.Apply(entry)
			raise(&delivered, e.Revision())
		}
	}
}

// watchdog cancels the watch when it has fallen behind the bucket and made
// no progress for WatchStall.
func (s *Store) watchdog(ctx context.Context, log *slog.Logger, delivered *atomic.Uint64, restart context.CancelCauseFunc) {
	var stuckAt uint64 // the revision the watch was at when it fell behind
	var since time.Time
	// Restarting cancels ctx, which ends the loop.
	clock.Every(ctx, time.Second, func() {
		last, err := s.LastRevision(ctx)
		seen := delivered.Load()
		switch {
		case err != nil || last <= seen:
			since = time.Time{}
		case since.IsZero() || seen != stuckAt:
			stuckAt, since = seen, time.Now()
		case time.Since(since) >= WatchStall:
			log.Warn("job watch stalled; restarting it", "delivered", seen, "latest", last, "for", time.Since(since).Round(time.Second))
			restart(errWatchStalled)
		}
	})
}

// raise sets v to rev if that is higher. Only follow writes v.
func raise(v *atomic.Uint64, rev uint64) {
	if rev > v.Load() {
		v.Store(rev)
	}
}
