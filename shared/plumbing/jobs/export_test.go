package jobs

import (
	"context"
	"log/slog"
)

// FollowOwn is Follow as Active follows: the entries of records this
// Store wrote carry their briefs, for the writes made once it was called.
func (s *Store) FollowOwn(ctx context.Context, log *slog.Logger, sink Sink) {
	s.own.follow()
	go s.followWith(ctx, log, sink, true)
}

// OwnWritesKept is how many writes' briefs the Store remembers.
func (s *Store) OwnWritesKept() int {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	return len(s.own.written)
}
