package store

import (
	"context"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// ReservationTxn builds the one transaction that claims a whole gang:
//
//	If:   every GPU claim key, the MASTER_PORT key and the job's allocation
//	      key are absent (a node held whole: no claim key at all under
//	      the node; any other node: no whole-node claim either); no agent reports ranks of the job alive on a node
//	      where they may be (RunningChecks: the prior reservation's nodes
//	      and this one's; see footprint.go) and the job's footprint is as
//	      read (prior.ModRev); every node key still has the revision read
//	      (nodeRevs; a node that re-registered or vanished fails it);
//	Then: put the allocation, every claim, the port claim and one
//	      assignment per node, all attached to lease, and the footprint
//	      (this placement's nodes, no lease);
//	Else: read the contested keys, so the caller can name the conflicts.
//
// It is the only way claims are created, so a gang holds all its GPUs or
// none of them.
//
// Its size, for n nodes, g GPU claim keys (ClaimKeys: one per node held
// whole) and r = len(RunningChecks) ≤ 2n: at most 2n+g+r+3 compares, n+g+3
// puts, 2n+g+r+2 reads. etcd counts each list
// against its --max-txn-ops (MaxTxnOps).
func ReservationTxn(a domain.Allocation, assigns []domain.Assignment, nodeRevs map[string]int64, prior Prior, lease clientv3.LeaseID) (cmps []clientv3.Cmp, then, els []clientv3.Op) {
	p := a.Placement
	wholeNodes := a.WholeSet()
	for _, np := range p.Nodes {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(NodeKey(np.Node)), "=", nodeRevs[np.Node]))
		els = append(els, clientv3.OpGet(NodeKey(np.Node), clientv3.WithKeysOnly()))
		if wholeNodes[np.Node] {
			// No claim of any kind on the node.
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(NodeClaimsPrefix(np.Node)), "=", 0).WithPrefix())
			els = append(els, clientv3.OpGet(NodeClaimsPrefix(np.Node), clientv3.WithPrefix()))
			continue
		}
		// Neither these GPUs' claims nor a whole-node claim.
		whole := WholeNodeClaimKey(np.Node)
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(whole), "=", 0))
		els = append(els, clientv3.OpGet(whole))
		for _, g := range np.GPUs {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(ClaimKey(np.Node, g)), "=", 0))
			els = append(els, clientv3.OpGet(ClaimKey(np.Node, g)))
		}
	}
	port := PortKey(p.MasterAddr, p.MasterPort)
	cmps = append(cmps,
		clientv3.Compare(clientv3.CreateRevision(port), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(AllocKey(a.JobID)), "=", 0))
	els = append(els, clientv3.OpGet(port), clientv3.OpGet(AllocKey(a.JobID)))
	for _, node := range RunningChecks(prior, p) {
		running := RunningKey(node, a.JobID)
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(running), "=", 0))
		els = append(els, clientv3.OpGet(running))
	}
	footprint := FootprintKey(a.JobID)
	cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(footprint), "=", prior.ModRev))
	then = append(AllocationPuts(a, assigns, clientv3.WithLease(lease)), clientv3.OpPut(footprint, MustJSON(FootprintOf(a))))
	return cmps, then, els
}

// Reserve reads the job's footprint (ReadPrior) and commits
// ReservationTxn. ok is false when any slot was taken; the response's Else
// reads then describe what stood in the way.
//
// A first attempt commits without reading first: it has a footprint only
// in rare cases (a reservation of it that ended without a requeue), and
// the footprint's compare (ModRevision 0: absent, exactly what ReadPrior
// returns then) makes a wrong guess fail like a conflict. Only a refused
// first attempt reads the footprint, and commits again if there is one.
// That saves a round trip on nearly every job.
func Reserve(ctx context.Context, kv clientv3.KV, a domain.Allocation, assigns []domain.Assignment, nodeRevs map[string]int64, lease clientv3.LeaseID) (bool, *clientv3.TxnResponse, error) {
	commit := func(prior Prior) (bool, *clientv3.TxnResponse, error) {
		cmps, then, els := ReservationTxn(a, assigns, nodeRevs, prior, lease)
		resp, err := kv.Txn(ctx).If(cmps...).Then(then...).Else(els...).Commit()
		if err != nil {
			return false, nil, errors.Wrapf(err, "reserve job %s", errors.Safe(a.JobID))
		}
		return resp.Succeeded, resp, nil
	}
	readPrior := func() (Prior, error) {
		prior, err := ReadPrior(ctx, kv, a.JobID)
		return prior, errors.Wrapf(err, "reserve job %s", errors.Safe(a.JobID))
	}
	if a.Attempt > 1 {
		prior, err := readPrior()
		if err != nil {
			return false, nil, err
		}
		return commit(prior)
	}
	ok, resp, err := commit(Prior{})
	if err != nil || ok {
		return ok, resp, err
	}
	// Refused on the guess: if there is no footprint, the refusal stands.
	prior, err := readPrior()
	switch {
	case err != nil:
		return false, nil, err
	case prior.ModRev == 0:
		return false, resp, nil
	}
	return commit(prior)
}
