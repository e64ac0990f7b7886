package store

import (
	"log/slog"
	"strings"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Typed caches of the prefixes in keys.go: each pairs a prefix with the
// type its values decode as, so that no caller can pair them wrongly.
// Run starts each. HoldingsCache (holdings.go) is one more.
var (
	// NodeCache mirrors the live node registrations (nodes/).
	NodeCache = cacheOf(NodesPrefix, nodeUnder(NodesPrefix))
	// InventoryCache mirrors every node's capacity, up or down (inventory/).
	InventoryCache = cacheOf(InventoryPrefix, nodeUnder(InventoryPrefix))
	// AllocationCache mirrors the allocation records (alloc/): every field
	// checked, and each the record of the job its key names; decoded when
	// read (LazyCache).
	AllocationCache = func(cli *clientv3.Client, log *slog.Logger) *LazyCache[domain.Allocation] {
		return NewLazyCache(cli, AllocPrefix, allocationUnder, log)
	}
	// DrainCache mirrors the drains in progress (drains/).
	DrainCache = cacheOf(DrainsPrefix, drainUnder)
	// NodeStateCache mirrors the operators' node drains (nodestate/).
	NodeStateCache = cacheOf(NodeStatePrefix, checked(domain.DecodeNodeState))
)

// cacheOf is the constructor of the caches of one prefix, decoded as T.
func cacheOf[T any](prefix string, decode func(key string, value []byte) (T, error)) func(cli *clientv3.Client, log *slog.Logger) *Cache[T] {
	return func(cli *clientv3.Client, log *slog.Logger) *Cache[T] {
		return NewCache(cli, prefix, decode, log)
	}
}

// checked decodes with one of domain's Decode* functions: every field
// checked, as for a message.
func checked[T any](decode func([]byte) (T, error)) func(string, []byte) (T, error) {
	return func(_ string, value []byte) (T, error) { return decode(value) }
}

// nodeUnder decodes a node registration and checks it is the one its key
// names: an agent writing nodes/a may not describe node b.
func nodeUnder(prefix string) func(string, []byte) (domain.Node, error) {
	return func(key string, value []byte) (domain.Node, error) {
		n, err := domain.DecodeNode(value)
		if err != nil {
			return n, err
		}
		if want := strings.TrimPrefix(key, prefix); n.Name != want {
			return n, errors.Newf("name: %q is not the node its key %s names", n.Name, key)
		}
		return n, nil
	}
}

// allocationUnder decodes an allocation with every domain check and the
// reconciler's (CheckAllocation): a record at alloc/x naming job y would
// have y's gang drained or preempted for x's.
func allocationUnder(key string, value []byte) (domain.Allocation, error) {
	a, err := domain.DecodeAllocation(value)
	if err == nil {
		err = CheckAllocation(key, a)
	}
	return a, err
}

// drainUnder decodes a drain record and checks it is of the job its key
// names: a record at drains/x naming job y would have y's drain judged, and
// the drain loop delete drains/y, not the record it read, every interval
// for ever.
func drainUnder(key string, value []byte) (domain.DrainRecord, error) {
	rec, err := domain.DecodeDrainRecord(value)
	if err == nil && rec.JobID != strings.TrimPrefix(key, DrainsPrefix) {
		err = errors.Newf("jobId: %q is not the job its key %s names", rec.JobID, key)
	}
	return rec, err
}
