package store_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A quiet watch is not a stalled one: it answers progress requests, keeps
// going past WatchStall and still delivers the next change. Quiet here is
// the hard case: a watch that starts right after a read in a cluster where
// nothing is written, as an idle agent's assignment watch does (etcd holds
// back progress for a watch that starts past its current revision).
func TestLiveWatchOutlivesQuiet(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context() // cancelled when the test ends, stopping what follows it
	put, err := env.Etcd.Put(ctx, "/quiet/before", "1")
	if err != nil {
		t.Fatal(err)
	}
	w := store.Watch(ctx, env.Etcd, "/quiet/", put.Header.Revision, clientv3.WithPrefix())
	time.Sleep(store.WatchStall + 2*time.Second)
	if _, err := env.Etcd.Put(ctx, "/quiet/a", "1"); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case resp, ok := <-w.C:
			if !ok {
				t.Fatalf("the watch ended while etcd answered: %v", w.Err())
			}
			for _, ev := range resp.Events {
				switch string(ev.Kv.Key) {
				case "/quiet/before":
					t.Fatal("the watch delivered the change it was told to start after")
				case "/quiet/a":
					return
				}
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the put was never delivered")
		}
	}
}

// A watch whose member stops answering (frozen: the connection stays open)
// ends with an error instead of waiting for the thaw; so does a request.
func TestLiveWatchAndRequestsGiveUpOnAFrozenMember(t *testing.T) {
	ctx, cli, p := clientThroughProxy(t)
	w := store.Watch(ctx, cli, "/frozen/", 0, clientv3.WithPrefix())
	time.Sleep(500 * time.Millisecond) // the watch is set up
	p.freeze()
	defer p.thaw()
	awaitStall(t, w)
	rctx, rcancel := context.WithTimeout(ctx, 4*time.Second)
	defer rcancel()
	if _, err := cli.Put(rctx, "/frozen/a", "1"); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("put to a frozen member: %v, want the attempt timeout", err)
	}
}

// A watch opened on a member that is already frozen ends with an error
// too: etcd's client returns a watch only once the member has answered
// that it created it, and a frozen member never does (compose pause-etcd:
// an agent whose old watch broke opened its new one on the frozen leader
// and started nothing until the thaw).
func TestLiveWatchOpenedOnAFrozenMemberGivesUp(t *testing.T) {
	ctx, cli, p := clientThroughProxy(t)
	p.freeze()
	defer p.thaw()
	opened := make(chan *store.LiveWatch, 1)
	go func() { opened <- store.Watch(ctx, cli, "/frozen/", 0, clientv3.WithPrefix()) }()
	select {
	case w := <-opened:
		awaitStall(t, w)
	case <-time.After(store.WatchStall):
		t.Fatal("store.Watch blocked on a frozen member")
	}
}

// clientThroughProxy is an etcd client (1 s attempt timeout) whose one
// member is reached through a freezingProxy, and a context for it that
// ends with the test.
func clientThroughProxy(t *testing.T) (context.Context, *clientv3.Client, *freezingProxy) {
	t.Helper()
	env := testenv.Start(t)
	p := newFreezingProxy(t, strings.TrimPrefix(env.EtcdEndpoint, "http://"))
	ctx := t.Context()
	cli, err := store.ConnectTimeout(ctx, "http://"+p.addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return ctx, cli, p
}

// clientThroughTwoProxies is an etcd client (1 s attempt timeout) of two
// members, each reached through a freezingProxy of its own (both lead to
// the test's one etcd), with the test's etcd environment; the client
// closes with the test. Both members are in use when it returns.
func clientThroughTwoProxies(t *testing.T) (*testenv.Env, *clientv3.Client, *freezingProxy, *freezingProxy) {
	t.Helper()
	env := testenv.Start(t)
	target := strings.TrimPrefix(env.EtcdEndpoint, "http://")
	a, b := newFreezingProxy(t, target), newFreezingProxy(t, target)
	cli, err := store.ConnectTimeout(t.Context(), "http://"+a.addr+",http://"+b.addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	awaitBothInUse(t, cli, a, b)
	return env, cli, a, b
}

// awaitBothInUse reads until each proxy has carried a read of its own.
// The client's first check needs one member, and it connects to the other
// in the background: a proxy frozen during that handshake leaves its
// member never ready, so the balancer sends it nothing and a test waiting
// for a request to meet the frozen member waits forever (a CI run under
// the race detector did, for 19 minutes). A read is a proxy's when only
// that proxy's answered bytes grew during it.
func awaitBothInUse(t *testing.T, cli *clientv3.Client, a, b *freezingProxy) {
	t.Helper()
	carried := map[*freezingProxy]bool{}
	testenv.Eventually(t, 20*time.Second, func() error {
		ca, cb := a.answered.Load(), b.answered.Load()
		if _, err := cli.Get(t.Context(), "/proxies/ping"); err != nil {
			return err
		}
		grewA, grewB := a.answered.Load() > ca, b.answered.Load() > cb
		switch {
		case grewA && !grewB:
			carried[a] = true
		case grewB && !grewA:
			carried[b] = true
		}
		if !carried[a] || !carried[b] {
			return fmt.Errorf("reads carried by proxy a: %t, b: %t", carried[a], carried[b])
		}
		return nil
	})
}

// awaitStall waits for w to end, and checks that it ended for a stall.
func awaitStall(t *testing.T, w *store.LiveWatch) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-w.C:
			if ok {
				continue
			}
			if err := w.Err(); err == nil || !strings.Contains(err.Error(), "no answer") || !errors.Is(err, store.ErrMemberSilent) {
				t.Errorf("watch ended with %v, want a stall marked ErrMemberSilent", err)
			}
			return
		case <-timeout:
			t.Fatal("the watch on a frozen member never ended")
		}
	}
}

// freezingProxy forwards TCP to target until frozen; then it keeps every
// connection open and passes nothing, like a paused process.
type freezingProxy struct {
	addr string
	// answered counts the bytes passed from the target to its clients.
	answered atomic.Int64
	mu       sync.Mutex
	frozen   bool
	cond     *sync.Cond
}

func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	p := &freezingProxy{addr: ln.Addr().String()}
	p.cond = sync.NewCond(&p.mu)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			t.Cleanup(func() { _ = in.Close(); _ = out.Close() })
			go p.pipe(out, in, nil)
			go p.pipe(in, out, &p.answered)
		}
	}()
	return p
}

// pipe copies src to dst while not frozen, adding what it passes to
// count (when not nil).
func (p *freezingProxy) pipe(dst io.Writer, src io.Reader, count *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.frozen {
			p.cond.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if count != nil {
				count.Add(int64(n))
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezingProxy) freeze() { p.mu.Lock(); p.frozen = true; p.mu.Unlock() }

func (p *freezingProxy) thaw() {
	p.mu.Lock()
	p.frozen = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// With one member of two frozen, every watch is still created, and soon:
// one sent to the frozen member is sent again on a stream of its own,
// which the client gives to the other member. (Without that second try,
// about every other watch here would wait the whole WatchStall and fail;
// compose pause-etcd: an agent's replacement watch landed on the frozen
// leader and its gang started 2 s later.)
func TestLiveWatchIsCreatedWhileOneMemberIsFrozen(t *testing.T) {
	env, cli, frozen, _ := clientThroughTwoProxies(t)
	ctx := t.Context()
	frozen.freeze()
	defer frozen.thaw()
	for i := range 6 {
		key := fmt.Sprintf("/hedge/%d", i)
		began := time.Now()
		w := store.Watch(ctx, cli, key, 0)
		// Written until the watch delivers it: a put before the watch is
		// created is not seen, and the one after is.
		put := time.NewTicker(100 * time.Millisecond)
		for delivered := false; !delivered; {
			select {
			case resp, ok := <-w.C:
				if !ok {
					put.Stop()
					t.Fatalf("watch %d ended after %s: %v", i, time.Since(began).Round(time.Millisecond), w.Err())
				}
				delivered = len(resp.Events) > 0
			case <-put.C:
				if _, err := env.Etcd.Put(ctx, key, "1"); err != nil {
					t.Fatal(err)
				}
			}
		}
		put.Stop()
	}
}

// A watch opened on a backlog gets it in batches of at most 1,000
// revisions, each stamped with etcd's current revision. Its header must
// say only what the batch holds, even when the batch starts at the
// revision the watch starts after (whose events Watch drops): a cache
// that took the stamp would think itself caught up while behind.
func TestLiveWatchCatchUpBatchShowsOnlyWhatItHolds(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	first, err := env.Etcd.Put(ctx, "/backlog/k", "0")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1200 {
		if _, err := env.Etcd.Put(ctx, "/backlog/k", strconv.Itoa(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	w := store.Watch(ctx, env.Etcd, "/backlog/", first.Header.Revision, clientv3.WithPrefix())
	select {
	case resp, ok := <-w.C:
		if !ok || len(resp.Events) == 0 {
			t.Fatalf("first response: %v %v", resp, w.Err())
		}
		last := resp.Events[len(resp.Events)-1].Kv.ModRevision
		if resp.Header.Revision != last {
			t.Errorf("a catch-up batch of %d events up to revision %d says it has seen through %d", len(resp.Events), last, resp.Header.Revision)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no response")
	}
}

// A watch etcd ends with an answer (here: its start revision compacted)
// is not a silent member: a caller that would watch again at once on
// silence must not do so on it.
func TestLiveWatchEndedByEtcdIsNotSilence(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	first, err := env.Etcd.Put(ctx, "/compacted/k", "0")
	if err != nil {
		t.Fatal(err)
	}
	last, err := env.Etcd.Put(ctx, "/compacted/k", "1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Etcd.Compact(ctx, last.Header.Revision); err != nil {
		t.Fatal(err)
	}
	w := store.Watch(ctx, env.Etcd, "/compacted/k", first.Header.Revision)
	select {
	case <-drained(w):
	case <-time.After(30 * time.Second):
		t.Fatal("a watch from a compacted revision did not end")
	}
	if err := w.Err(); err == nil || errors.Is(err, store.ErrMemberSilent) {
		t.Errorf("watch from a compacted revision ended with %v, want etcd's error, not silence", err)
	}
}

// drained is closed once w.C is.
func drained(w *store.LiveWatch) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range w.C {
		}
		close(done)
	}()
	return done
}
