package store

import (
	"context"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/domain"
)

// An allocation is a set of keys that live and die together: the
// allocation record, one claim per GPU, the MASTER_PORT claim and one
// assignment per node. These helpers are the only code that knows the set.

// AllocationPuts returns the writes that create (or re-write) an
// allocation. opts apply to every put (e.g. clientv3.WithLease).
func AllocationPuts(a domain.Allocation, assigns []domain.Assignment, opts ...clientv3.OpOption) []clientv3.Op {
	claim := MustJSON(domain.Claim{JobID: a.JobID, Attempt: a.Attempt})
	ops := []clientv3.Op{clientv3.OpPut(AllocKey(a.JobID), MustJSON(a), opts...)}
	for _, np := range a.Placement.Nodes {
		for _, g := range np.GPUs {
			ops = append(ops, clientv3.OpPut(ClaimKey(np.Node, g), claim, opts...))
		}
	}
	ops = append(ops, clientv3.OpPut(PortKey(a.Placement.MasterAddr, a.Placement.MasterPort), claim, opts...))
	for _, as := range assigns {
		ops = append(ops, clientv3.OpPut(AssignKey(as.Node, as.JobID), MustJSON(as), opts...))
	}
	return ops
}

// AllocationDeletes returns the deletes that remove an allocation.
func AllocationDeletes(a domain.Allocation) []clientv3.Op {
	ops := []clientv3.Op{clientv3.OpDelete(AllocKey(a.JobID))}
	for _, np := range a.Placement.Nodes {
		for _, g := range np.GPUs {
			ops = append(ops, clientv3.OpDelete(ClaimKey(np.Node, g)))
		}
		ops = append(ops, clientv3.OpDelete(AssignKey(np.Node, a.JobID)))
	}
	ops = append(ops, clientv3.OpDelete(PortKey(a.Placement.MasterAddr, a.Placement.MasterPort)))
	return ops
}

// GetAllocation reads a job's allocation; found is false when none exists.
func GetAllocation(ctx context.Context, kv clientv3.KV, jobID string) (a domain.Allocation, modRev int64, found bool, err error) {
	found, modRev, err = GetJSON(ctx, kv, AllocKey(jobID), &a)
	return a, modRev, found, err
}

// Release deletes an allocation in one transaction, if it is still the
// version read (modRev). It reports whether it deleted anything; false
// means someone else already released or changed it.
func Release(ctx context.Context, kv clientv3.KV, a domain.Allocation, modRev int64) (bool, error) {
	resp, err := kv.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(AllocKey(a.JobID)), "=", modRev)).
		Then(AllocationDeletes(a)...).
		Commit()
	if err != nil {
		return false, errors.Wrapf(err, "release allocation of job %s", errors.Safe(a.JobID))
	}
	return resp.Succeeded, nil
}

// ReleaseJob reads and releases a job's allocation if it belongs to the
// given attempt (any attempt when attempt < 0). It is idempotent.
func ReleaseJob(ctx context.Context, kv clientv3.KV, jobID string, attempt int) error {
	for range 5 {
		a, rev, found, err := GetAllocation(ctx, kv, jobID)
		if err != nil || !found || (attempt >= 0 && a.Attempt != attempt) {
			return err
		}
		ok, err := Release(ctx, kv, a, rev)
		if err != nil || ok {
			return err
		}
	}
	return errors.Newf("release allocation of job %s: kept changing", errors.Safe(jobID))
}
