package store

import (
	"context"
	"log/slog"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// LazyCache is a Cache whose values are decoded when first read, not when
// written: for a reader that looks at few of the values it mirrors, and
// rarely, decoding every write is most of what the mirror costs. Drain's
// allocations are such (read for the drains in progress, and all of them
// only while a node is drained or a GPU withdrawn): at 500 jobs/s their
// eager decoding was 4 % of the whole process's CPU. Each value is decoded
// at most once; one that fails decode's checks reads as absent, as Cache
// leaves it out, and is logged when first read (not when written). A
// reader of every value (drain's cluster gauges, at each metrics scrape)
// decodes the values written since it last read: the saving is the
// versions overwritten in between, and all of them while nothing scrapes.
// A reload (a broken watch) makes every value new, to decode again.
type LazyCache[T any] struct {
	c *Cache[*lazy[T]]
}

// lazy is one written value, decoded on first read.
type lazy[T any] struct {
	key    string
	raw    []byte
	decode func(key string, value []byte) (T, error)
	log    *slog.Logger
	once   sync.Once
	v      T
	ok     bool
}

func (l *lazy[T]) value() (T, bool) {
	l.once.Do(func() {
		v, err := l.decode(l.key, l.raw)
		if err != nil {
			l.log.Warn("skipping a record that fails its checks", "key", l.key, "err", err)
		} else {
			l.v, l.ok = v, true
		}
		l.raw = nil
	})
	return l.v, l.ok
}

// NewLazyCache builds a LazyCache of the values under prefix, each checked
// by decode when first read; Run starts it.
func NewLazyCache[T any](cli *clientv3.Client, prefix string, decode func(key string, value []byte) (T, error), log *slog.Logger) *LazyCache[T] {
	wrap := func(key string, value []byte) (*lazy[T], error) {
		return &lazy[T]{key: key, raw: value, decode: decode, log: log}, nil
	}
	return &LazyCache[T]{c: NewCache(cli, prefix, wrap, log)}
}

// Run keeps the cache current until ctx ends.
func (c *LazyCache[T]) Run(ctx context.Context) { c.c.Run(ctx) }

// Ready is closed once the first full load is done.
func (c *LazyCache[T]) Ready() <-chan struct{} { return c.c.Ready() }

// Rev is the etcd revision the cache is known to be current at.
func (c *LazyCache[T]) Rev() int64 { return c.c.Rev() }

// Get returns one item, decoded.
func (c *LazyCache[T]) Get(key string) (T, bool) {
	l, ok := c.c.Get(key)
	if !ok {
		var zero T
		return zero, false
	}
	return l.value()
}

// Snapshot copies the current items, decoded (each at most once over the
// cache's life).
func (c *LazyCache[T]) Snapshot() map[string]T {
	items := c.c.Snapshot()
	out := make(map[string]T, len(items))
	for k, l := range items {
		if v, ok := l.value(); ok {
			out[k] = v
		}
	}
	return out
}
