package store

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// AllocationDetach returns the writes of the launch barrier: every key of
// the allocation put again without a lease, which detaches it from the
// reservation lease. The record is rewritten as a; the GPU and port
// claims get their few bytes again (what AllocationPuts wrote); the
// assignments, the bulk of the allocation's bytes, keep their stored
// value (etcd's ignore_value), so the barrier neither rebuilds nor
// resends them. ignore_value costs etcd a read of each key's stored
// value, which for a claim costs more than its bytes sent again.
//
// Every key must exist: etcd fails the whole transaction otherwise. Guard
// the writes with the allocation's ModRevision, as every writer of an
// allocation does: the keys of an allocation are only ever created and
// deleted together (one Txn, or their shared lease), so an unchanged
// allocation record means they are all there.
func AllocationDetach(a domain.Allocation) []clientv3.Op {
	keep := clientv3.WithIgnoreValue()
	claim := claimValue(a) // as AllocationPuts wrote it
	ops := []clientv3.Op{clientv3.OpPut(AllocKey(a.JobID), MustJSON(a))}
	for _, key := range ClaimKeys(a) {
		ops = append(ops, clientv3.OpPut(key, claim))
	}
	for _, np := range a.Placement.Nodes {
		ops = append(ops, clientv3.OpPut(AssignKey(np.Node, a.JobID), "", keep))
	}
	ops = append(ops, clientv3.OpPut(PortKey(a.Placement.MasterAddr, a.Placement.MasterPort), claim))
	return ops
}
