package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// Cache mirrors every key under a prefix, decoded as T, kept current by an
// etcd watch. It resynchronises from a fresh Get whenever the watch breaks
// (compaction, leader change), so it never silently drifts.
type Cache[T any] struct {
	cli    *clientv3.Client
	prefix string
	decode func(key string, value []byte) (T, error)
	// decodeOver, when set, decodes instead of decode, handed the key's
	// current item (newCacheOver).
	decodeOver func(key string, value []byte, prev *T) (T, error)
	log        *slog.Logger
	// OnChange, when set, is called after every applied change with the key,
	// the new value (nil on delete) and the previous value (nil if none).
	OnChange func(key string, val, prev *T)

	mu    sync.RWMutex
	items map[string]T
	revs  map[string]int64 // ModRevision per key
	rev   int64
	gen   uint64     // bumped on every change of items
	live  *LiveWatch // the current watch, for progress requests
	ready chan struct{}
}

// NewCache builds a cache of the values under prefix, each checked by
// decode (given the key, so it can check that the value belongs there);
// Run starts it. A value decode refuses is not in the cache: a record
// that was valid and is overwritten with one that is not drops out rather
// than stay as it was.
func NewCache[T any](cli *clientv3.Client, prefix string, decode func(key string, value []byte) (T, error), log *slog.Logger) *Cache[T] {
	return &Cache[T]{cli: cli, prefix: prefix, decode: decode, log: log, items: map[string]T{}, revs: map[string]int64{}, ready: make(chan struct{})}
}

// newCacheOver is NewCache with a decoder that is also handed the item the
// value replaces (nil for a new key), so that it may reuse what the two
// share rather than decode it again. What it returns must be what it
// would return without prev.
func newCacheOver[T any](cli *clientv3.Client, prefix string, decode func(key string, value []byte, prev *T) (T, error), log *slog.Logger) *Cache[T] {
	c := NewCache[T](cli, prefix, nil, log)
	c.decodeOver = decode
	return c
}

// decodeValue decodes a value read for key. Only the goroutine that
// changes items (Run's) calls it, so the item handed to decodeOver cannot
// change under it; caches without decodeOver look nothing up.
func (c *Cache[T]) decodeValue(key string, value []byte) (T, error) {
	if c.decodeOver == nil {
		return c.decode(key, value)
	}
	c.mu.RLock()
	cur, ok := c.items[key]
	c.mu.RUnlock()
	if !ok {
		return c.decodeOver(key, value, nil)
	}
	return c.decodeOver(key, value, &cur)
}

// Ready is closed once the first full load is done.
func (c *Cache[T]) Ready() <-chan struct{} { return c.ready }

// Snapshot copies the current items.
func (c *Cache[T]) Snapshot() map[string]T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]T, len(c.items))
	for k, v := range c.items {
		out[k] = v
	}
	return out
}

// Each calls fn with every item, in no order, under the cache's read
// lock: a pass over the items without Snapshot's copy of them. The cache
// takes no change while fn runs, so fn must be quick and must not call
// back into the cache.
func (c *Cache[T]) Each(fn func(key string, v T)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for k, v := range c.items {
		fn(k, v)
	}
}

// Rev is the etcd revision the cache is known to be current at. It moves
// only after OnChange has been called for every change up to it, so state
// that OnChange maintains is as current as Rev says too.
func (c *Cache[T]) Rev() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// Generation changes whenever the items do (and only then, unlike Rev,
// which progress notifications also move): a value derived from a Snapshot
// stays valid while the generation read before it is current.
func (c *Cache[T]) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// GetRev returns one item with the ModRevision it was written at.
func (c *Cache[T]) GetRev(key string) (T, int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.items[key]
	return v, c.revs[key], ok
}

// Get returns one item.
func (c *Cache[T]) Get(key string) (T, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.items[key]
	return v, ok
}

// Run keeps the cache current until ctx ends.
func (c *Cache[T]) Run(ctx context.Context) {
	once := sync.Once{}
	for ctx.Err() == nil {
		if err := c.load(ctx); err != nil {
			c.log.Warn("cache load failed", "prefix", c.prefix, "err", err)
			clock.Sleep(ctx, time.Second)
			continue
		}
		once.Do(func() { close(c.ready) })
		c.watch(ctx)
	}
}

func (c *Cache[T]) load(ctx context.Context) error {
	resp, err := c.cli.Get(ctx, c.prefix, clientv3.WithPrefix())
	if err != nil {
		return errors.Wrapf(err, "list %s", c.prefix)
	}
	fresh := make(map[string]T, len(resp.Kvs))
	revs := make(map[string]int64, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		v, err := c.decodeValue(string(kv.Key), kv.Value)
		if err != nil {
			c.log.Warn("skipping a record that fails its checks", "key", string(kv.Key), "err", err)
			continue
		}
		fresh[string(kv.Key)] = v
		revs[string(kv.Key)] = kv.ModRevision
	}
	c.mu.Lock()
	old := c.items
	c.items, c.revs = fresh, revs
	c.gen++
	c.mu.Unlock()
	// Rev moves only once OnChange has seen the changes (see Rev).
	defer func() {
		c.mu.Lock()
		c.rev = resp.Header.Revision
		c.mu.Unlock()
	}()
	if c.OnChange != nil {
		for k, v := range fresh {
			v := v
			if p, ok := old[k]; ok {
				c.OnChange(k, &v, &p)
			} else {
				c.OnChange(k, &v, nil)
			}
		}
		for k, p := range old {
			if _, ok := fresh[k]; !ok {
				p := p
				c.OnChange(k, nil, &p)
			}
		}
	}
	return nil
}

// RequestProgress asks the cache's watch for a progress notification, so
// that Rev catches up with etcd even when nothing under the prefix changed.
func (c *Cache[T]) RequestProgress() {
	c.mu.RLock()
	w := c.live
	c.mu.RUnlock()
	if w != nil {
		w.RequestProgress()
	}
}

func (c *Cache[T]) watch(ctx context.Context) {
	c.mu.RLock()
	after := c.rev
	c.mu.RUnlock()
	// No WithPrevKV: the previous value OnChange is given is the cache's
	// own. Asked for, etcd would read every event's previous version from
	// its backend and send it along, once per watching cache.
	w := Watch(ctx, c.cli, c.prefix, after, clientv3.WithPrefix())
	c.mu.Lock()
	c.live = w
	c.mu.Unlock()
	defer func() {
		if err := w.Err(); err != nil {
			c.log.Warn("watch broken, reloading", "prefix", c.prefix, "err", err)
		}
	}()
	for resp := range w.C {
		for _, ev := range resp.Events {
			c.apply(ev)
		}
		c.mu.Lock()
		// A response (with events or a progress notification) means the
		// cache has seen everything up to its header revision (which Watch
		// makes true of a catch-up batch too).
		c.rev = max(c.rev, resp.Header.Revision)
		c.mu.Unlock()
	}
}

func (c *Cache[T]) apply(ev *clientv3.Event) {
	key := string(ev.Kv.Key)
	var val *T
	if ev.Type == clientv3.EventTypePut {
		v, err := c.decodeValue(key, ev.Kv.Value)
		if err != nil {
			// Whatever was there before is no longer the record: drop it
			// (a no-op when there was none).
			c.log.Warn("dropping a record that fails its checks", "key", key, "err", err)
		} else {
			val = &v
		}
	}
	var prev *T
	c.mu.Lock()
	p, had := c.items[key]
	if had {
		prev = &p
	}
	if val == nil && !had {
		c.mu.Unlock()
		return
	}
	if val != nil {
		c.items[key] = *val
		c.revs[key] = ev.Kv.ModRevision
	} else {
		delete(c.items, key)
		delete(c.revs, key)
	}
	c.gen++
	c.mu.Unlock()
	if c.OnChange != nil {
		c.OnChange(key, val, prev)
	}
}

// CatchUp waits until every cache has seen etcd's current revision, so a
// decision made right after is made on a view at least as new as any write
// that completed before the call. It asks the server for progress
// notifications; past timeout (plus a second for the revision read) it
// gives up quietly (the caller's decisions
// are re-validated at commit anyway).
func CatchUp(ctx context.Context, cli *clientv3.Client, timeout time.Duration, caches ...interface{ Rev() int64 }) bool {
	// The revision read is bounded too: a frozen member would hold it
	// until it thawed, and the caller's decisions with it.
	gctx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	resp, err := cli.Get(gctx, Prefix+"catch-up", clientv3.WithCountOnly())
	cancel()
	if err != nil {
		return false
	}
	target := resp.Header.Revision
	deadline := time.Now().Add(timeout)
	asked := false
	for {
		behind := false
		for _, c := range caches {
			if c.Rev() < target {
				behind = true
				break
			}
		}
		if !behind {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		if !asked {
			// Each request may wait on a frozen member up to WatchStall;
			// in turn, four of them held the caller 8 s past its timeout.
			for _, c := range caches {
				if p, ok := c.(interface{ RequestProgress() }); ok {
					go p.RequestProgress()
				}
			}
			asked = true
		}
		time.Sleep(2 * time.Millisecond)
	}
}
