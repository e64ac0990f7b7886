package store

import (
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Typed caches of the prefixes in keys.go: each pairs a prefix with the
// type its values decode as, so that no caller can pair them wrongly.
// Run starts each.
var (
	// NodeCache mirrors the live node registrations (nodes/).
	NodeCache = cacheOf[domain.Node](NodesPrefix)
	// InventoryCache mirrors every node's capacity, up or down (inventory/).
	InventoryCache = cacheOf[domain.Node](InventoryPrefix)
	// ClaimCache mirrors the GPU claims (claims/).
	ClaimCache = cacheOf[domain.Claim](ClaimsPrefix)
	// PortClaimCache mirrors the MASTER_PORT claims (ports/).
	PortClaimCache = cacheOf[domain.Claim](PortsPrefix)
	// AllocationCache mirrors the allocation records (alloc/).
	AllocationCache = cacheOf[domain.Allocation](AllocPrefix)
	// DrainCache mirrors the drains in progress (drains/).
	DrainCache = cacheOf[domain.DrainRecord](DrainsPrefix)
	// NodeStateCache mirrors the operators' node drains (nodestate/).
	NodeStateCache = cacheOf[domain.NodeState](NodeStatePrefix)
)

// cacheOf is the constructor of the caches of one prefix, decoded as T.
func cacheOf[T any](prefix string) func(cli *clientv3.Client, log *slog.Logger) *Cache[T] {
	return func(cli *clientv3.Client, log *slog.Logger) *Cache[T] {
		return NewCache[T](cli, prefix, log)
	}
}
