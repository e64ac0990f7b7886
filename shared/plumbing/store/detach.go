package store

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// AllocationDetach returns the writes of the launch barrier: the allocation
// record rewritten as a (no lease), and every other key of the allocation
// (claims, the port claim, the assignments) put again with its current
// value and no lease. etcd's ignore_value keeps the stored value, so the
// barrier neither rebuilds nor resends the assignments; a put without a
// lease detaches the key from the reservation lease.
//
// Every key must exist: etcd fails the whole transaction otherwise. Guard
// the writes with the allocation's ModRevision, as every writer of an
// allocation does: the keys of an allocation are only ever created and
// deleted together (one Txn, or their shared lease), so an unchanged
// allocation record means they are all there.
func AllocationDetach(a domain.Allocation) []clientv3.Op {
	keep := clientv3.WithIgnoreValue()
	ops := []clientv3.Op{clientv3.OpPut(AllocKey(a.JobID), MustJSON(a))}
	for _, key := range ClaimKeys(a) {
		ops = append(ops, clientv3.OpPut(key, "", keep))
	}
	for _, np := range a.Placement.Nodes {
		ops = append(ops, clientv3.OpPut(AssignKey(np.Node, a.JobID), "", keep))
	}
	ops = append(ops, clientv3.OpPut(PortKey(a.Placement.MasterAddr, a.Placement.MasterPort), "", keep))
	return ops
}
