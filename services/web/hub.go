package web

import (
	"context"
	"sync"
	"time"
)

// coalesce is the least time between two broadcasts: a burst of changes
// (jobs starting and ending together are many watch events) becomes one
// re-render per page.
const coalesce = 250 * time.Millisecond

// hub tells the open pages that something they show changed. The watches
// (etcd caches, the jobs follower, the events subscription) call changed;
// run wakes on it, takes a sample for the cluster page, and wakes every
// subscriber. Nothing is polled: without a change, nothing runs.
type hub struct {
	kick chan struct{}

	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	// gen counts broadcasts: a page rendered at one generation is current
	// until the next.
	gen uint64
}

// generation is the number of broadcasts so far.
func (h *hub) generation() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

func newHub() *hub {
	return &hub{kick: make(chan struct{}, 1), subs: map[chan struct{}]struct{}{}}
}

// changed says something changed; it never blocks.
func (h *hub) changed() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// subscribe returns a channel that receives after each broadcast (a
// pending one is enough: a slow page skips to the latest state) and the
// function that ends the subscription.
func (h *hub) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// run broadcasts after each change, at most once per coalesce, calling
// tick first; it returns when ctx ends.
func (h *hub) run(ctx context.Context, tick func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.kick:
		}
		tick()
		h.mu.Lock()
		h.gen++
		for ch := range h.subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(coalesce):
		}
	}
}
