package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// Campaign waits until this session leads the election under prefix and
// returns the election, to resign it. The election is etcd's own
// (concurrency.Election: a key prefix/<lease> per candidate, the oldest
// leads), and so is the order: each candidate waits for the deletion of
// the newest key older than its own.
//
// It is concurrency.Election.Campaign with the wait made live. etcd's
// waits on a plain watch, and a watch whose member freezes (a hung VM, a
// stalled disk) delivers nothing until the thaw: a standby whose wait sat
// on the frozen etcd leader never saw the old leader's key go, and nobody
// scheduled for the whole freeze. This one waits on a store.Watch, which
// gives up on a silent member, and then reads again.
func (s *Session) Campaign(ctx context.Context, prefix, val string) (*concurrency.Election, error) {
	cli := s.cs.Client()
	key := fmt.Sprintf("%s/%x", prefix, s.cs.Lease()) // as concurrency.Election keys it
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, val, clientv3.WithLease(s.cs.Lease()))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return nil, errors.Wrapf(err, "campaign: put %s", key)
	}
	rev := resp.Header.Revision
	if !resp.Succeeded {
		// The session's key is there already (a campaign repeated on the
		// same session): its place in the line is where it was put.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return nil, errors.Newf("campaign: %s vanished between compare and read", key)
		}
		rev = kvs[0].CreateRevision
	}
	for {
		ahead, err := cli.Get(ctx, prefix+"/", append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...)
		if err != nil {
			return nil, errors.Wrap(err, "campaign: read the candidates ahead")
		}
		if len(ahead.Kvs) == 0 {
			return concurrency.ResumeElection(s.cs, prefix, key, rev), nil
		}
		if err := waitDeleted(ctx, cli, string(ahead.Kvs[0].Key), ahead.Header.Revision); err != nil {
			return nil, err
		}
	}
}

// waitDeleted waits until key is deleted after revision after, or until
// its watch gives up on a silent member; either way the caller reads
// again. ctx ending, or a watch error etcd answered (which reading again
// at once would only repeat), is an error, for the caller's own pause.
func waitDeleted(ctx context.Context, cli *clientv3.Client, key string, after int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := Watch(wctx, cli, key, after)
	for resp := range w.C {
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return nil
			}
		}
	}
	switch err := w.Err(); {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil || errors.Is(err, ErrMemberSilent):
		return nil
	case errors.Is(err, rpctypes.ErrNoLeader):
		// The member lost its leader (a store.Watch requires one): etcd
		// is electing, which takes about a second. Read again after a
		// moment rather than give the campaign up, as etcd's own wait,
		// which needs no leader, would not.
		clock.Sleep(ctx, 250*time.Millisecond)
		return ctx.Err()
	default:
		return errors.Wrapf(err, "campaign: watch %s", key)
	}
}
