package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// Session is a lease held by a LeaseKeeper, for a service replica's term
// (a placement leader, a gang replica's reservations). Unlike a bare
// concurrency.Session it is not lost when the etcd client gives up on its
// keep-alive stream — only when etcd says so, or when renewals stop long
// enough that etcd could expire it, and then TTL/5 before it could.
type Session struct {
	cs     *concurrency.Session
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	err    error
}

// OpenSession grants a lease of ttl (whole seconds, at least 1) and keeps
// it until the session is lost, closed or orphaned, or ctx ends.
func OpenSession(ctx context.Context, cli *clientv3.Client, ttl time.Duration, log *slog.Logger) (*Session, error) {
	granted := time.Now()
	secs := max(int64(ttl/time.Second), 1)
	lease, err := cli.Grant(ctx, secs)
	if err != nil {
		return nil, errors.Wrap(err, "grant session lease")
	}
	sctx, cancel := context.WithCancel(ctx)
	// The concurrency session is only there for elections; it keeps the
	// lease too, and the client shares one keep-alive between them.
	cs, err := concurrency.NewSession(cli, concurrency.WithLease(lease.ID), concurrency.WithContext(sctx))
	if err != nil {
		cancel()
		return nil, errors.Wrap(err, "open session")
	}
	s := &Session{cs: cs, ctx: sctx, cancel: cancel}
	// As granted: etcd may raise a TTL below its minimum.
	keeper := NewLeaseKeeper(cli, lease.ID, time.Duration(lease.TTL)*time.Second, log.With("lease", int64(lease.ID)))
	go func() {
		err := keeper.Hold(sctx, granted)
		s.mu.Lock()
		if s.err == nil && sctx.Err() == nil {
			s.err = err
		}
		s.mu.Unlock()
		cancel()
	}()
	return s, nil
}

// OpenSessionRetrying opens a session as OpenSession does, retrying every
// second while etcd refuses (each failure logged), until one opens or ctx
// ends; then it returns ctx's error.
func OpenSessionRetrying(ctx context.Context, cli *clientv3.Client, ttl time.Duration, log *slog.Logger) (*Session, error) {
	for {
		sess, err := OpenSession(ctx, cli, ttl, log)
		if err == nil {
			return sess, nil
		}
		log.Warn("etcd session failed, retrying", "err", err)
		clock.Sleep(ctx, time.Second)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// Lease is the session's lease.
func (s *Session) Lease() clientv3.LeaseID { return s.cs.Lease() }

// Context ends when the session does: lost, closed, orphaned, or its
// parent context ended.
func (s *Session) Context() context.Context { return s.ctx }

// Lost says why the session was lost, or nil if it was not (yet).
func (s *Session) Lost() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Orphan stops renewing the lease and leaves it to expire: what a crashed
// replica would do, and what a gang replica does so that reservations it
// made can still pass their launch barrier meanwhile.
func (s *Session) Orphan() {
	s.cancel()
	s.cs.Orphan()
}

// Close stops renewing the lease and revokes it, releasing what it holds
// now rather than at expiry.
func (s *Session) Close() {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = s.cs.Client().Revoke(ctx, s.cs.Lease())
}
