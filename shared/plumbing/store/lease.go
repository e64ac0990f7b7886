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
	// Expendable, if set, is asked when a renewal is late or the client
	// gave the stream up, before any direct renewal: true lets the lease
	// go (Hold returns ErrLetGo). A pool's idle lease holds nothing (or
	// the keys of a gang past its launch deadline), and during an election renewing every one of them directly would cost
	// etcd several requests a second each; a new one is granted when
	// needed.
	Expendable func() bool
	// Late, if set, hears of each late renewal: NewLeaseKeeper tells the
	// client's member guard, since the stream may sit on a frozen member.
	Late func()
	Log  *slog.Logger
}

// ErrLetGo is Hold's answer when it let an expendable lease go rather than
// renew it directly.
var ErrLetGo = errors.New("expendable lease let go instead of renewed directly")

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
		Late: func() { noticeUnanswered(cli) },
		Log:  log,
	}
}

// Hold keeps the lease until ctx ends (returning ctx's error) or the lease
// is lost or could be. granted is no later than etcd started the lease's
// clock; each renewal restarts the clock from when its response arrived,
// which is after etcd restarted its own.
//
// A renewal that is late (LateAfter since the last one) is tried directly,
// again and again, up to half the FenceMargin before etcd could expire the
// lease; failing that, Hold returns then. Starting early matters when the
// etcd leader freezes: the client's stream may sit on the frozen member,
// and the survivors answer renewals only once they have elected a new
// leader, a second or two later. Until the client's renewals come again,
// the holder then renews directly every TTL/3.
func (k LeaseKeeper) Hold(ctx context.Context, granted time.Time) error {
	margin := FenceMargin(k.TTL)
	expires := granted.Add(k.TTL) // at the earliest, as far as we know
	late := time.NewTimer(time.Until(expires.Add(LateAfter(k.TTL) - k.TTL)))
	defer late.Stop()
	direct := false // renewing on its own, the client's renewals not coming
	renewed := func(left time.Duration) {
		expires = time.Now().Add(min(left, k.TTL))
		late.Reset(time.Until(expires.Add(LateAfter(k.TTL) - k.TTL)))
		direct = false
	}
	// While the client's renewals do not come (its stream sits on a frozen
	// member), the holder renews on the client's own cadence, a third of the
	// TTL, rather than waiting to be late again: each direct renewal then
	// has two thirds of the TTL, less half the margin, to get through.
	renewedDirectly := func(left time.Duration) {
		if !direct {
			k.Log.Info("lease renewal was late; renewing directly until the client's renewals come again", "after", time.Since(expires.Add(-k.TTL)).Round(time.Millisecond))
		}
		expires = time.Now().Add(min(left, k.TTL))
		late.Reset(k.TTL / 3)
		direct = true
	}
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
				renewed(time.Duration(resp.TTL) * time.Second)
				continue
			}
			if k.expendable() {
				return ErrLetGo
			}
			// Not before half the margin from now: the client may close a
			// stream that still renews.
			giveUp := expires.Add(-margin / 2)
			if soon := time.Now().Add(margin / 2); giveUp.Before(soon) {
				giveUp = soon
			}
			left, err := k.renewUntil(ctx, giveUp)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return errors.Wrap(err, "expired or revoked")
			}
			if ka, err = k.KeepAlive(ctx); err != nil {
				return errors.Wrap(err, "keep alive")
			}
			k.Log.Warn("lease keep-alive stream gave up but the lease lives; reopened it")
			renewed(left)
		case <-late.C:
			// The client's renewals may just be late (they are checked twice
			// a second, a busy machine delays them, a frozen etcd leader
			// blocks them).
			if k.Late != nil {
				k.Late()
			}
			if k.expendable() {
				return ErrLetGo
			}
			giveUp := expires.Add(-margin / 2)
			left, err := k.renewUntil(ctx, giveUp)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return errors.Newf("not renewed for %s of its %s TTL (%v); giving it up before etcd expires it", k.TTL-margin/2, k.TTL, err)
			}
			renewedDirectly(left)
		}
	}
}

// expendable asks Expendable, if set, whether to let the lease go rather
// than renew it directly.
func (k LeaseKeeper) expendable() bool { return k.Expendable != nil && k.Expendable() }

// LateAfter is how long after the last renewal a holder stops waiting for
// the client's next one and renews directly: the client renews every TTL/3
// and checks twice a second, so a renewal is late a second after that, or
// at half the TTL if that is later, and at the latest when FenceMargin
// starts.
func LateAfter(ttl time.Duration) time.Duration {
	return min(max(ttl/2, ttl/3+time.Second), ttl-FenceMargin(ttl))
}

// renewUntil renews the lease directly until one renewal works or giveUp.
// Attempts overlap: a new one starts every renewEvery while none has
// answered, each living up to renewAttempt. The client spreads requests
// over the etcd members, and while the leader is frozen an attempt can
// hang whichever member it reaches: the frozen one never answers, and a
// follower forwards the renewal to the frozen leader and waits on it even
// after the survivors have elected a new one. So only attempts started
// after the election, on a live member, succeed, and the sooner one starts
// the more of the holder's time is left. It stops at once if etcd says the
// lease is gone.
func (k LeaseKeeper) renewUntil(ctx context.Context, giveUp time.Time) (time.Duration, error) {
	ctx, cancel := context.WithDeadline(ctx, giveUp)
	defer cancel() // ends the attempts still in flight
	type result struct {
		left time.Duration
		err  error
	}
	results := make(chan result)
	attempt := func() {
		actx, acancel := context.WithTimeout(ctx, renewAttempt)
		defer acancel()
		left, err := k.Renew(actx)
		select {
		case results <- result{left, err}:
		case <-ctx.Done():
		}
	}
	every := time.NewTicker(renewEvery)
	defer every.Stop()
	go attempt()
	err := ctx.Err()
	for {
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return 0, err
		case r := <-results:
			switch {
			case errors.Is(r.err, rpctypes.ErrLeaseNotFound) || (r.err == nil && r.left <= 0):
				return 0, errors.New("etcd says the lease is gone")
			case r.err == nil:
				return r.left, nil
			}
			err = r.err
		case <-every.C:
			// One attempt a tick, whatever became of the last: a member
			// that refuses at once is not asked again at once, and hung
			// attempts do not pile up (each ends after renewAttempt, so
			// about renewAttempt/renewEvery are in flight). During an
			// outage every lease holder renews at this pace, and etcd is
			// the one that has to answer them all.
			go attempt()
		}
	}
}

const (
	// renewEvery is how often renewUntil starts another attempt while none
	// has answered: a renewal that works takes milliseconds.
	renewEvery = 200 * time.Millisecond
	// renewAttempt bounds one direct renewal: long enough for a live but
	// busy member, short enough that a hung one is given up.
	renewAttempt = 600 * time.Millisecond
)

// FenceMargin is how long before a lease could expire in etcd its holder
// stops acting on it: time to stop (kill ranks, end a term), plus the
// response's travel time. The etcd client renews every TTL/3 (checked
// twice a second), so a healthy holder is never more than about TTL/3 +
// 0.5 s from its last renewal; at most TTL/4 keeps even a 2 s TTL clear of
// false alarms.
func FenceMargin(ttl time.Duration) time.Duration {
	return min(max(ttl/5, time.Second), ttl/4)
}
