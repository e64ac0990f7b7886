package store

import (
	"context"
	"fmt"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// An allocation is a set of keys that live and die together: the
// allocation record, its GPU claims (ClaimKeys), the MASTER_PORT claim and
// one assignment per node. These helpers are the only code that knows the
// set.

// ClaimKeys are the GPU claim keys of an allocation: one for each node it
// holds whole (a.WholeNodes), one per GPU on the others. A gang of n whole
// nodes of g GPUs writes n keys, not n×g, three times each (reserve,
// detach, release): most of the etcd writes a job costs.
func ClaimKeys(a domain.Allocation) []string {
	var keys []string
	whole := a.WholeSet()
	for _, np := range a.Placement.Nodes {
		if whole[np.Node] {
			keys = append(keys, WholeNodeClaimKey(np.Node))
			continue
		}
		for _, g := range np.GPUs {
			keys = append(keys, ClaimKey(np.Node, g))
		}
	}
	return keys
}

// AllocationPuts returns the writes that create (or re-write) an
// allocation. opts apply to every put (e.g. clientv3.WithLease).
func AllocationPuts(a domain.Allocation, assigns []domain.Assignment, opts ...clientv3.OpOption) []clientv3.Op {
	claim := claimValue(a)
	ops := []clientv3.Op{clientv3.OpPut(AllocKey(a.JobID), MustJSON(a), opts...)}
	for _, key := range ClaimKeys(a) {
		ops = append(ops, clientv3.OpPut(key, claim, opts...))
	}
	ops = append(ops, clientv3.OpPut(PortKey(a.Placement.MasterAddr, a.Placement.MasterPort), claim, opts...))
	for _, as := range assigns {
		ops = append(ops, clientv3.OpPut(AssignKey(as.Node, as.JobID), MustJSON(as), opts...))
	}
	return ops
}

// claimValue is the value of every GPU and port claim of a.
func claimValue(a domain.Allocation) string {
	return MustJSON(domain.Claim{JobID: a.JobID, Attempt: a.Attempt})
}

// AllocationDeletes returns the deletes that remove an allocation.
func AllocationDeletes(a domain.Allocation) []clientv3.Op {
	ops := []clientv3.Op{clientv3.OpDelete(AllocKey(a.JobID))}
	for _, key := range ClaimKeys(a) {
		ops = append(ops, clientv3.OpDelete(key))
	}
	for _, np := range a.Placement.Nodes {
		ops = append(ops, clientv3.OpDelete(AssignKey(np.Node, a.JobID)))
	}
	ops = append(ops, clientv3.OpDelete(PortKey(a.Placement.MasterAddr, a.Placement.MasterPort)))
	return ops
}

// GetAllocation reads a job's allocation; found is false when none exists.
// A value that does not decode, or that contradicts its key or itself
// (CheckAllocation), is returned as an ErrMalformed error with found true
// and its ModRevision, so the caller can release it (ReleaseJob) instead
// of retrying on it.
func GetAllocation(ctx context.Context, kv clientv3.KV, jobID string) (a domain.Allocation, modRev int64, found bool, err error) {
	return getDecoded(ctx, kv, AllocKey(jobID), DecodeAllocation)
}

// GetCheckedAllocation reads a job's allocation as the strict
// AllocationCache decodes it (every field checked, not only what release
// relies on): a value that cache skips is an ErrMalformed error here,
// with found true.
func GetCheckedAllocation(ctx context.Context, kv clientv3.KV, jobID string) (a domain.Allocation, modRev int64, found bool, err error) {
	return getDecoded(ctx, kv, AllocKey(jobID), func(key string, value []byte) (domain.Allocation, error) {
		a, err := allocationUnder(key, value)
		if err != nil && !IsMalformed(err) {
			err = markMalformed(errors.Wrap(err, key))
		}
		return a, err
	})
}

// getDecoded reads one key and decodes its value with the decoder its
// cache uses; found is false when the key does not exist. A value that
// fails decode is an error with found true and its ModRevision.
func getDecoded[T any](ctx context.Context, kv clientv3.KV, key string, decode func(key string, value []byte) (T, error)) (v T, modRev int64, found bool, err error) {
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return v, 0, false, errors.Wrapf(err, "get %s", key)
	}
	if len(resp.Kvs) == 0 {
		return v, 0, false, nil
	}
	v, err = decode(key, resp.Kvs[0].Value)
	return v, resp.Kvs[0].ModRevision, true, err
}

// DecodeAllocation decodes the value of an allocation key and checks it
// (CheckAllocation); a failure is an ErrMalformed error naming the key.
func DecodeAllocation(key string, value []byte) (domain.Allocation, error) {
	var a domain.Allocation
	if err := codec.Decode(value, &a); err != nil {
		return domain.Allocation{}, markMalformed(errors.Wrapf(err, "%s: undecodable", key))
	}
	if err := CheckAllocation(key, a); err != nil {
		return domain.Allocation{}, err
	}
	return a, nil
}

// CheckAllocation checks what every user of an allocation relies on: that
// it is the record of the job its key names, and that its placement names
// each node and GPU once. Releasing an allocation deletes the keys its
// placement names, so a record that lied about its job would release
// another job's claims.
func CheckAllocation(key string, a domain.Allocation) error {
	bad := func(field, format string, args ...any) error {
		return markMalformed(errors.Newf("%s: %s: %s", key, field, fmt.Sprintf(format, args...)))
	}
	switch {
	case a.JobID != LastSegment(key):
		return bad("jobId", "%q is not the job the key names", a.JobID)
	case a.Attempt < 1:
		return bad("attempt", "%d is not a positive attempt", a.Attempt)
	case a.State != domain.AllocReserved && a.State != domain.AllocRunning:
		return bad("state", "unknown state %q", a.State)
	case len(a.Placement.Nodes) == 0:
		return bad("placement.nodes", "empty")
	case a.Placement.MasterAddr == "":
		return bad("placement.masterAddr", "empty")
	case a.Placement.MasterPort < 1 || a.Placement.MasterPort > 65535:
		return bad("placement.masterPort", "%d is not a port", a.Placement.MasterPort)
	}
	nodes := map[string]bool{}
	for i, np := range a.Placement.Nodes {
		if np.Node == "" || nodes[np.Node] {
			return bad(fmt.Sprintf("placement.nodes[%d].node", i), "%q is empty or repeated", np.Node)
		}
		nodes[np.Node] = true
		gpus := map[int]bool{}
		for _, g := range np.GPUs {
			if g < 0 || gpus[g] {
				return bad(fmt.Sprintf("placement.nodes[%d].gpus", i), "GPU %d is negative or repeated", g)
			}
			gpus[g] = true
		}
	}
	whole := map[string]bool{}
	for i, n := range a.WholeNodes {
		if !nodes[n] || whole[n] {
			return bad(fmt.Sprintf("wholeNodes[%d]", i), "%q is not a node of the placement, or repeated", n)
		}
		whole[n] = true
	}
	return nil
}

// Release deletes an allocation in one transaction, if it is still the
// version read (modRev). It reports whether it deleted anything; false
// means someone else already released or changed it.
func Release(ctx context.Context, kv clientv3.KV, a domain.Allocation, modRev int64) (bool, error) {
	return release(ctx, kv, a, modRev, AllocationDeletes(a))
}

// ReleaseFinished is Release for the attempt of a job whose record is
// already final (succeeded, failed): the same transaction deletes the
// job's footprint, which no later reservation of a finished job can need.
// Left for gang's reconciler it would cost a list, a read of the job's
// record and a delete of its own, for every job that ends.
func ReleaseFinished(ctx context.Context, kv clientv3.KV, a domain.Allocation, modRev int64) (bool, error) {
	return release(ctx, kv, a, modRev, append(AllocationDeletes(a), clientv3.OpDelete(FootprintKey(a.JobID))))
}

func release(ctx context.Context, kv clientv3.KV, a domain.Allocation, modRev int64, deletes []clientv3.Op) (bool, error) {
	resp, err := kv.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(AllocKey(a.JobID)), "=", modRev)).
		Then(deletes...).
		Commit()
	if err != nil {
		return false, errors.Wrapf(err, "release allocation of job %s", errors.Safe(a.JobID))
	}
	return resp.Succeeded, nil
}

// Released says what ReleaseJob found and removed.
type Released struct {
	// Record is true when a well-formed allocation of the attempt was
	// released through its record.
	Record bool
	// Malformed, when set, says why alloc/<job> could not be used (naming
	// the key and the field): the record was deleted and the job's other
	// keys were found by their values instead (SweepJob).
	Malformed error
	// Swept counts the keys a sweep deleted.
	Swept int
}

// ReleaseJob reads and releases a job's allocation if it belongs to the
// given attempt (any attempt when attempt < 0). A malformed record never
// makes it fail or retry: the record is deleted and the job's claims,
// port claim and assignments of that attempt or older are swept by their
// values. It is idempotent.
func ReleaseJob(ctx context.Context, kv clientv3.KV, jobID string, attempt int) (Released, error) {
	for range 5 {
		a, rev, found, err := GetAllocation(ctx, kv, jobID)
		if IsMalformed(err) {
			return releaseMalformed(ctx, kv, jobID, attempt, rev, err)
		}
		if err != nil || !found || (attempt >= 0 && a.Attempt != attempt) {
			return Released{}, err
		}
		ok, err := Release(ctx, kv, a, rev)
		if err != nil || ok {
			return Released{Record: ok}, err
		}
	}
	return Released{}, errors.Newf("release allocation of job %s: kept changing", errors.Safe(jobID))
}

// ReleaseAttempt is ReleaseJob for an attempt that must be gone before the
// job moves on (a requeue): when no well-formed record of the attempt was
// there to release (deleted by hand, corrupt), its keys are swept by their
// values, and it returns only once no claim, port claim or assignment of
// the attempt or an older one is left — agents stop the ranks of an
// assignment that is gone, so a next attempt never starts beside them.
func ReleaseAttempt(ctx context.Context, kv clientv3.KV, jobID string, attempt int) (Released, error) {
	r, err := ReleaseJob(ctx, kv, jobID, attempt)
	if err != nil || r.Record || r.Malformed != nil {
		return r, err
	}
	r.Swept, err = SweepJob(ctx, kv, jobID, attempt)
	return r, err
}

func releaseMalformed(ctx context.Context, kv clientv3.KV, jobID string, attempt int, rev int64, why error) (Released, error) {
	r := Released{Malformed: why}
	key := AllocKey(jobID)
	resp, err := kv.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return r, errors.Wrapf(err, "delete malformed %s", key)
	}
	if resp.Succeeded {
		r.Swept++
	}
	n, err := SweepJob(ctx, kv, jobID, attempt)
	r.Swept += n
	return r, err
}
