package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/store"
)

// runningKeys keeps running/<job>/<node> for every gang with a process
// alive on this node: written before its ranks start, deleted once their
// whole trees are gone. Gang reserves no attempt of a job while such a key
// exists, so a next attempt never starts beside ranks of the one before
// that are still being stopped (a rank ignoring SIGTERM lives until the
// stop grace ends). The key is attached to the registration's lease: an
// agent that dies takes it along, and its supervisors take the ranks.
type runningKeys struct {
	etcd *clientv3.Client
	node string
	log  *slog.Logger
}

// holdTimeout bounds the write that must precede a launch.
const holdTimeout = 5 * time.Second

// hold records that as's ranks are about to run here. It returns the
// key's revision, which drop compares against. The assignment's epoch is
// the registration's lease (checked by the caller).
func (r *runningKeys) hold(ctx context.Context, as domain.Assignment) (int64, error) {
	if r == nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, holdTimeout)
	defer cancel()
	val := store.Running{JobID: as.JobID, Node: r.node, Attempt: as.Attempt, Epoch: as.Epoch}
	// Retried within holdTimeout: one member that stopped answering (a
	// frozen etcd leader) times a request out, and the next one goes to
	// another member. Failing at once would requeue the whole gang.
	for i := 0; ; i++ {
		resp, err := r.etcd.Put(ctx, store.RunningKey(as.JobID, r.node), store.MustJSON(val), clientv3.WithLease(clientv3.LeaseID(as.Epoch)))
		if err == nil {
			return resp.Header.Revision, nil
		}
		if ctx.Err() != nil || errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return 0, errors.Wrapf(err, "record ranks of job %s attempt %d as running", errors.Safe(as.JobID), as.Attempt)
		}
		r.log.Warn("running key not written, retrying", "job", as.JobID, "attempt", as.Attempt, "err", err)
		sleep(ctx, min(time.Duration(i+1)*100*time.Millisecond, time.Second))
	}
}

// drop deletes the key hold wrote, unless a later attempt of the job
// started here has rewritten it since (its value then differs; rev 0 means
// hold wrote nothing). It retries until it succeeds
// or ctx (the registration) ends: a registration that ends takes the key
// along with its lease.
func (r *runningKeys) drop(ctx context.Context, as domain.Assignment, rev int64) {
	if r == nil || rev == 0 {
		return
	}
	key := store.RunningKey(as.JobID, r.node)
	// Compared by value, not by the revision hold saw: a put that timed
	// out on a frozen member can still be applied after hold's retry
	// succeeded, rewriting the same value at a later revision.
	val := store.MustJSON(store.Running{JobID: as.JobID, Node: r.node, Attempt: as.Attempt, Epoch: as.Epoch})
	for i := 0; ctx.Err() == nil; i++ {
		_, err := r.etcd.Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", val)).Then(clientv3.OpDelete(key)).Commit()
		if err == nil {
			return
		}
		r.log.Warn("running key not deleted, retrying", "key", key, "err", err)
		sleep(ctx, min(time.Duration(i+1)*200*time.Millisecond, time.Second))
	}
}
