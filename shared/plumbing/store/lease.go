package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// LeaseKeeper keeps one etcd lease alive and says when it is lost — or is
// about to be, early enough that its holder can stop acting on it before
// etcd expires it and hands what it guards to someone else (an agent's
// ranks, a placement leader's term, a gang replica's reservations).
//
// The etcd client's keep-alive stream alone is not trusted either way. A
// renewal forwarded by a follower to a frozen leader blocks the stream for
// up to etcd's request timeout (7 s); the client then declares the lease
// expired on its own clock, while etcd, under its new leader, has extended
// it. So a closed stream is checked with a renewal of the keeper's own, and
// reopened if the lease lives; and late renewals are tried directly before
// the holder is told to give up.
type LeaseKeeper struct {
	// TTL is the lease's time to live as granted.
	TTL time.Duration
	// KeepAlive opens the client's keep-alive stream for the lease.
	KeepAlive func(context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error)
	// Renew renews the lease once, on a request of its own, and returns
	// the TTL etcd gave it: 0 (or rpctypes.ErrLeaseNotFound) means gone.
	Renew func(context.Context) (time.Duration, error)
	Log   *slog.Logger
}

// NewLeaseKeeper keeps lease id alive through cli.
func NewLeaseKeeper(cli *clientv3.Client, id clientv3.LeaseID, ttl time.Duration, log *slog.Logger) LeaseKeeper {
	return LeaseKeeper{
		TTL: ttl,
		KeepAlive: func(ctx context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
			return cli.KeepAlive(ctx, id)
		},
		Renew: func(ctx context.Context) (time.Duration, error) {
			resp, err := cli.KeepAliveOnce(ctx, id)
			if err != nil {
				return 0, err
			}
			return time.Duration(resp.TTL) * time.Second, nil
		},
		Log: log,
	}
}

// Hold keeps the lease until ctx ends (returning ctx's error) or the lease
// is lost or could be: with no renewal heard for the TTL less FenceMargin,
// it renews directly (for at most half the margin) and, failing that,
// returns before etcd can expire the lease. granted is no later than etcd
// started the lease's clock. Each renewal restarts the clock from when its
// response arrived, which is after etcd restarted its own.
func (k LeaseKeeper) Hold(ctx context.Context, granted time.Time) error {
	margin := FenceMargin(k.TTL)
	fence := time.NewTimer(time.Until(granted.Add(k.TTL - margin)))
	defer fence.Stop()
	ka, err := k.KeepAlive(ctx)
	if err != nil {
		return errors.Wrap(err, "keep alive")
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case resp, ok := <-ka:
			if ok {
				fence.Reset(min(time.Duration(resp.TTL)*time.Second, k.TTL) - margin)
				continue
			}
			left, err := k.renewWithin(ctx, margin/2)
			if err != nil {
				return errors.Wrap(err, "expired or revoked")
			}
			if ka, err = k.KeepAlive(ctx); err != nil {
				return errors.Wrap(err, "keep alive")
			}
			k.Log.Warn("lease keep-alive stream gave up but the lease lives; reopened it")
			fence.Reset(min(left, k.TTL) - margin)
		case <-fence.C:
			// The client's renewals may just be late (they are checked twice
			// a second, a busy machine delays them, a frozen etcd leader
			// blocks them).
			left, err := k.renewWithin(ctx, margin/2)
			if err != nil {
				return errors.Newf("not renewed for %s of its %s TTL (%v); giving it up before etcd expires it", k.TTL-margin, k.TTL, err)
			}
			k.Log.Warn("lease renewal was late; renewed it directly", "after", k.TTL-margin)
			fence.Reset(min(left, k.TTL) - margin)
		}
	}
}

// renewWithin renews the lease directly, trying again until budget is
// spent: the client spreads requests over the etcd members, so a retry
// usually avoids the one that hangs. It stops at once if etcd says the
// lease is gone.
func (k LeaseKeeper) renewWithin(ctx context.Context, budget time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	attempt := max(budget/3, 100*time.Millisecond)
	err := ctx.Err()
	for ctx.Err() == nil {
		next := time.Now().Add(attempt)
		actx, acancel := context.WithDeadline(ctx, next)
		var left time.Duration
		left, err = k.Renew(actx)
		acancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && left <= 0):
			return 0, errors.New("etcd says the lease is gone")
		case err == nil:
			return left, nil
		}
		select { // a member that refuses at once is not asked again at once
		case <-ctx.Done():
		case <-time.After(time.Until(next)):
		}
	}
	return 0, err
}

// FenceMargin is how long before a lease could expire in etcd its holder
// stops acting on it: time to stop (kill ranks, end a term), plus the
// response's travel time. The etcd client renews every TTL/3 (checked
// twice a second), so a healthy holder is never more than about TTL/3 +
// 0.5 s from its last renewal; at most TTL/4 keeps even a 2 s TTL clear of
// false alarms.
func FenceMargin(ttl time.Duration) time.Duration {
	return min(max(ttl/5, time.Second), ttl/4)
}
