package store

import (
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Typed caches of the prefixes in keys.go: each pairs a prefix with the
// type its values decode as, so that no caller can pair them wrongly.
// Run starts each.

// NodeCache mirrors the live node registrations (nodes/).
func NodeCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.Node] {
	return NewCache[domain.Node](cli, NodesPrefix, log)
}

// InventoryCache mirrors every node's capacity, up or down (inventory/).
func InventoryCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.Node] {
	return NewCache[domain.Node](cli, InventoryPrefix, log)
}

// ClaimCache mirrors the GPU claims (claims/).
func ClaimCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.Claim] {
	return NewCache[domain.Claim](cli, ClaimsPrefix, log)
}

// PortClaimCache mirrors the MASTER_PORT claims (ports/).
func PortClaimCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.Claim] {
	return NewCache[domain.Claim](cli, PortsPrefix, log)
}

// AllocationCache mirrors the allocation records (alloc/).
func AllocationCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.Allocation] {
	return NewCache[domain.Allocation](cli, AllocPrefix, log)
}

// DrainCache mirrors the drains in progress (drains/).
func DrainCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.DrainRecord] {
	return NewCache[domain.DrainRecord](cli, DrainsPrefix, log)
}

// NodeStateCache mirrors the operators' node drains (nodestate/).
func NodeStateCache(cli *clientv3.Client, log *slog.Logger) *Cache[domain.NodeState] {
	return NewCache[domain.NodeState](cli, NodeStatePrefix, log)
}
