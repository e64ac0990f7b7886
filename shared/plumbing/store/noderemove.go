package store

import (
	"context"
	"fmt"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNodeInUse marks a node that RemoveNode would not remove: it is up, or
// something of a job is still on it.
var ErrNodeInUse = errors.New("node in use")

// RemoveNode forgets a node that is gone for good: its inventory record
// and its admin state. Only a down, idle node goes, and in one Txn that
// compares both, so an agent registering again at that instant, or a
// gang reserving on it, is never removed from under: no live
// registration (its agent's lease ended), no GPU claim, no assignment and
// no running rank. Otherwise the error, marked ErrNodeInUse, says why.
func RemoveNode(ctx context.Context, kv clientv3.KV, node string) error {
	empty := func(prefix string) clientv3.Cmp {
		return clientv3.Compare(clientv3.CreateRevision(prefix), "=", 0).WithPrefix()
	}
	resp, err := kv.Txn(ctx).If(
		clientv3.Compare(clientv3.CreateRevision(InventoryKey(node)), ">", 0),
		clientv3.Compare(clientv3.CreateRevision(NodeKey(node)), "=", 0),
		empty(NodeClaimsPrefix(node)), empty(NodeAssignPrefix(node)), empty(NodeRunningPrefix(node)),
	).Then(
		clientv3.OpDelete(InventoryKey(node)), clientv3.OpDelete(NodeStateKey(node)),
	).Else(
		clientv3.OpGet(InventoryKey(node), clientv3.WithCountOnly()),
		clientv3.OpGet(NodeKey(node), clientv3.WithCountOnly()),
		clientv3.OpGet(NodeClaimsPrefix(node), clientv3.WithPrefix(), clientv3.WithCountOnly()),
		clientv3.OpGet(NodeAssignPrefix(node), clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(3)),
		clientv3.OpGet(NodeRunningPrefix(node), clientv3.WithPrefix(), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return errors.Wrapf(err, "remove node %s", node)
	}
	if resp.Succeeded {
		return nil
	}
	count := func(i int) int64 { return resp.Responses[i].GetResponseRange().Count }
	switch {
	case count(0) == 0:
		return errors.Newf("node %s is not in the inventory", node)
	case count(1) > 0:
		return errors.Mark(errors.Newf("node %s is up: drain it and stop its agent first (its registration ends with its lease)", node), ErrNodeInUse)
	case count(2) > 0:
		return errors.Mark(errors.Newf("node %s still holds GPU claims of a gang (claim keys: %d)", node, count(2)), ErrNodeInUse)
	case count(3) > 0:
		var jobs []string
		for _, kv := range resp.Responses[3].GetResponseRange().Kvs {
			jobs = append(jobs, LastSegment(string(kv.Key)))
		}
		return errors.Mark(errors.Newf("node %s is still assigned jobs %v%s", node, jobs, more(count(3), len(jobs))), ErrNodeInUse)
	default:
		return errors.Mark(errors.Newf("node %s still has %d running ranks' records", node, count(4)), ErrNodeInUse)
	}
}

func more(total int64, shown int) string {
	if total > int64(shown) {
		return fmt.Sprintf(" and %d more", total-int64(shown))
	}
	return ""
}
