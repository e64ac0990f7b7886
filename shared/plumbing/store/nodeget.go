package store

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// GetNode reads node's registration (nodes/) with NodeCache's checks, for a
// reader that missed the cache: a value the cache would refuse must not be
// trusted on the direct read either. found is false when the key is absent;
// a value that fails the checks is an error with found true.
func GetNode(ctx context.Context, kv clientv3.KV, node string) (n domain.Node, modRev int64, found bool, err error) {
	return getDecoded(ctx, kv, NodeKey(node), nodeUnder(NodesPrefix))
}

// GetInventory reads node's inventory record (inventory/) with
// InventoryCache's checks, as GetNode does the registration.
func GetInventory(ctx context.Context, kv clientv3.KV, node string) (n domain.Node, modRev int64, found bool, err error) {
	return getDecoded(ctx, kv, InventoryKey(node), nodeUnder(InventoryPrefix))
}
