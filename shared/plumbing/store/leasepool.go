package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// LeasePool lends a gang replica one etcd lease per reservation in flight.
//
// Why not one lease for all of them: with auth on, etcd checks, for every
// put under a lease, the put permission of every key already attached to
// that lease (its checkLeasePuts; only its root user is spared). A
// reservation puts n+g+3 keys, so under one shared lease each reservation
// costs time in proportion to all the reservations not yet launched, and a
// backlog makes it quadratic: 3 jobs/s at 300/s offered, against 300 with
// auth off. A lease lent to one reservation at a time holds nothing when the
// reservation's puts are checked.
//
// A lease goes back to the pool when its reservation failed, or its keys
// were detached (the launch barrier) or deleted (a release), as the caller
// says with Return, naming the borrower it lent to: a gang's barrier and
// its release both give its lease back, and by the second the lease may
// be lent to another reservation, which must keep it. Or, since another
// replica may launch it, the lease comes back by itself at the
// reservation's deadline (the launch deadline, after which the gang is
// released). Lending a lease that still holds a few keys only costs time;
// the guarantee does not depend on it: every lent lease is kept alive by
// this replica (a LeaseKeeper each, over the client's one keep-alive
// stream), and so is every idle one until a renewal of it is late (an etcd
// election: it is then let go, not renewed directly; one taken back at its
// deadline may still hold the keys of a gang no one launched, which then
// expire with it, as they would with a dead replica), and all of them
// expire together when it dies or when ctx ends (they are left
// to expire, not revoked: a gang about to pass its barrier can still be
// made durable by another replica meanwhile).
type LeasePool struct {
	ctx context.Context
	cli *clientv3.Client
	ttl time.Duration
	log *slog.Logger

	mu   sync.Mutex
	free []clientv3.LeaseID
	// stop ends each lease's keeper: the pool's revocations are no loss.
	stop map[clientv3.LeaseID]context.CancelFunc
	// lent holds each lent lease's loan.
	lent map[clientv3.LeaseID]loan
	// reclaimAt is when lent is next scanned for past deadlines.
	reclaimAt time.Time
}

// loan is whom a lease is lent to, and until when.
type loan struct {
	borrower string
	deadline time.Time
}

// maxFreeLeases bounds the idle leases a pool keeps alive; more are
// revoked as they come back (they hold nothing).
const maxFreeLeases = 256

// NewLeasePool lends leases of ttl (whole seconds, at least 1), kept alive
// until ctx ends.
func NewLeasePool(ctx context.Context, cli *clientv3.Client, ttl time.Duration, log *slog.Logger) *LeasePool {
	return &LeasePool{ctx: ctx, cli: cli, ttl: ttl, log: log, lent: map[clientv3.LeaseID]loan{}, stop: map[clientv3.LeaseID]context.CancelFunc{}}
}

// Lend returns a lease for one reservation, named by borrower, whose keys
// will be detached or deleted by deadline: an idle one, or a new one.
func (p *LeasePool) Lend(ctx context.Context, borrower string, deadline time.Time) (clientv3.LeaseID, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, errors.Wrap(err, "lease pool closed")
	}
	p.mu.Lock()
	p.reclaimLocked(time.Now())
	if n := len(p.free); n > 0 {
		id := p.free[n-1]
		p.free = p.free[:n-1]
		p.lent[id] = loan{borrower, deadline}
		p.mu.Unlock()
		return id, nil
	}
	p.mu.Unlock()
	id, err := p.grant(ctx)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.lent[id] = loan{borrower, deadline}
	p.mu.Unlock()
	return id, nil
}

// Return gives back a lease whose reservation, borrower, holds nothing on
// it any more. Leases the pool did not lend to borrower (or lent it, took
// back and lent to another since), or lost, are ignored.
func (p *LeasePool) Return(id clientv3.LeaseID, borrower string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.lent[id]; !ok || l.borrower != borrower {
		return
	}
	delete(p.lent, id)
	p.idleLocked(id)
}

// Size is how many leases the pool keeps alive: lent and idle.
func (p *LeasePool) Size() (lent, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lent), len(p.free)
}

func (p *LeasePool) idleLocked(id clientv3.LeaseID) {
	if len(p.free) < maxFreeLeases {
		p.free = append(p.free, id)
		return
	}
	if stop, ok := p.stop[id]; ok {
		stop() // before the revocation, which its keeper would take for a loss
		delete(p.stop, id)
	}
	go func() {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		defer cancel()
		_, _ = p.cli.Revoke(ctx, id) // else it expires: it holds nothing
	}()
}

// reclaimLocked takes back, at most once a second, the leases lent for
// reservations past their deadline (launched or released by another
// replica, or by this one without a Return).
func (p *LeasePool) reclaimLocked(now time.Time) {
	if now.Before(p.reclaimAt) {
		return
	}
	p.reclaimAt = now.Add(time.Second)
	for id, l := range p.lent {
		if now.After(l.deadline) {
			delete(p.lent, id)
			p.idleLocked(id)
		}
	}
}

// grant makes a new lease and keeps it alive until p.ctx ends or it is
// lost; a lost lease leaves the pool (its reservations are the
// reconciler's to requeue).
func (p *LeasePool) grant(ctx context.Context) (clientv3.LeaseID, error) {
	granted := time.Now()
	resp, err := p.cli.Grant(ctx, max(int64(p.ttl/time.Second), 1))
	if err != nil {
		return 0, errors.Wrap(err, "grant reservation lease")
	}
	id := resp.ID
	log := p.log.With("lease", int64(id))
	// As granted: etcd may raise a TTL below its minimum.
	keeper := NewLeaseKeeper(p.cli, id, time.Duration(resp.TTL)*time.Second, log)
	keeper.Expendable = func() bool { return p.retireIfIdle(id) }
	kctx, stop := context.WithCancel(p.ctx)
	p.mu.Lock()
	p.stop[id] = stop
	p.mu.Unlock()
	go func() {
		err := keeper.Hold(kctx, granted)
		stopped := kctx.Err() != nil
		stop()
		p.mu.Lock()
		delete(p.stop, id)
		p.mu.Unlock()
		if stopped {
			return // revoked by the pool, or left to expire with the others
		}
		if errors.Is(err, ErrLetGo) {
			// Left to expire: revoking it is one more request to an etcd
			// that is already slow to answer.
			log.Debug("idle reservation lease let go when its renewal was late")
			return
		}
		log.Warn("reservation lease lost; its reservations will be requeued", "err", err)
		p.drop(id)
	}()
	return id, nil
}

// retireIfIdle takes an idle lease out of the pool, so that it is never
// lent again, and says whether it was idle; a lent lease stays.
func (p *LeasePool) retireIfIdle(id clientv3.LeaseID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unfreeLocked(id)
}

// unfreeLocked takes id out of the idle leases, if it is one.
func (p *LeasePool) unfreeLocked(id clientv3.LeaseID) bool {
	for i, f := range p.free {
		if f == id {
			p.free = append(p.free[:i], p.free[i+1:]...)
			return true
		}
	}
	return false
}

// drop forgets a lost lease.
func (p *LeasePool) drop(id clientv3.LeaseID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.lent, id)
	p.unfreeLocked(id)
}
