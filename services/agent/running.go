package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// runningKeys keeps running/<node>/<job> for every gang with a process
// alive on this node: written before its ranks start, deleted once their
// whole trees are gone. Gang reserves no attempt of a job while such a key
// exists, so a next attempt never starts beside ranks of the one before
// that are still being stopped (a rank ignoring SIGTERM lives until the
// stop grace ends). The key is attached to the registration's lease: an
// agent that dies takes it along, and its supervisors take the ranks.
// Gang looks for the keys only on the nodes of the job's latest
// reservation (store.ReadPrior), which holds because a key is written
// only while the assignment it is for exists.
type runningKeys struct {
	etcd *clientv3.Client
	node string
	log  *slog.Logger
}

// holdTimeout bounds the write that must precede a launch.
const holdTimeout = 5 * time.Second

// errAssignmentGone says that hold found the assignment deleted (or
// replaced): its attempt is over, and nothing of it may start.
var errAssignmentGone = errors.New("assignment no longer in etcd")

// hold records that as's ranks are about to run here, if the assignment
// is still the one created at assignRev (its CreateRevision; 0 skips the
// check, for tests of the executor alone): once it is gone, gang may have
// reserved the job elsewhere, and would not look for a key here. It
// returns the key's revision; non-zero means drop must delete the key. The
// assignment's epoch is the registration's lease (checked by the caller).
func (r *runningKeys) hold(ctx context.Context, as domain.Assignment, assignRev int64) (int64, error) {
	if r == nil {
		return 0, nil
	}
	reg := ctx
	ctx, cancel := context.WithTimeout(ctx, holdTimeout)
	defer cancel()
	val := store.Running{JobID: as.JobID, Node: r.node, Attempt: as.Attempt, Epoch: as.Epoch}
	put := clientv3.OpPut(store.RunningKey(r.node, as.JobID), store.MustJSON(val), clientv3.WithLease(clientv3.LeaseID(as.Epoch)))
	var cmps []clientv3.Cmp
	if assignRev != 0 {
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(store.AssignKey(r.node, as.JobID)), "=", assignRev))
	}
	// Retried within holdTimeout: one member that stopped answering (a
	// frozen etcd leader) times a request out, and the next one goes to
	// another member. Failing at once would requeue the whole gang.
	for i := 0; ; i++ {
		resp, err := r.etcd.Txn(ctx).If(cmps...).Then(put).Commit()
		if err == nil && !resp.Succeeded {
			if i > 0 {
				// A try that timed out may have been applied before the
				// assignment went: delete what it wrote (by value).
				go r.drop(reg, as, resp.Header.Revision)
			}
			return 0, errors.Mark(errors.Newf("record ranks of job %s attempt %d as running: assignment gone", errors.Safe(as.JobID), as.Attempt), errAssignmentGone)
		}
		if err == nil {
			return resp.Header.Revision, nil
		}
		if ctx.Err() != nil || errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return 0, errors.Wrapf(err, "record ranks of job %s attempt %d as running", errors.Safe(as.JobID), as.Attempt)
		}
		r.log.Warn("running key not written, retrying", "job", as.JobID, "attempt", as.Attempt, "err", err)
		clock.Sleep(ctx, min(time.Duration(i+1)*100*time.Millisecond, time.Second))
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
	key := store.RunningKey(r.node, as.JobID)
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
		clock.Sleep(ctx, min(time.Duration(i+1)*200*time.Millisecond, time.Second))
	}
}
