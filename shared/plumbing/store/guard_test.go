package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// With one member of two frozen, the client stops sending it requests
// once one has gone unanswered, and takes it back once it answers again.
// Without the guard, the balancer hands the frozen member every other
// request, and each waits out the attempt timeout there.
func TestFrozenMemberIsLeftOutUntilItAnswers(t *testing.T) {
	_, cli, a, b := clientThroughTwoProxies(t)
	aURL, bURL := "http://"+a.addr, "http://"+b.addr
	ctx := t.Context()
	const timeout = time.Second // clientThroughTwoProxies's attempt timeout

	// get reads a key, retried by the client on the other member if the
	// first does not answer, and says whether it took a timeout to do so.
	get := func() (slow bool) {
		t.Helper()
		began := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := cli.Get(rctx, "/guard/k"); err != nil {
			t.Fatalf("get with one member of two live: %v", err)
		}
		return time.Since(began) >= timeout/2
	}
	endpoints := func(want ...string) {
		t.Helper()
		testenv.Eventually(t, 10*time.Second, func() error {
			if got := cli.Endpoints(); !slices.Equal(got, want) {
				return fmt.Errorf("endpoints in use %v, want %v", got, want)
			}
			return nil
		})
	}

	a.freeze()
	// Until one lands on the frozen member (the balancer takes turns);
	// bounded, so that a balancer that never picks it fails here instead
	// of running out the package's time.
	for deadline := time.Now().Add(time.Minute); !get(); {
		if time.Now().After(deadline) {
			t.Fatal("no get landed on the frozen member in a minute")
		}
	}
	endpoints(bURL)
	for i := range 20 {
		if get() {
			t.Fatalf("get %d after the frozen member was found still waited on it", i)
		}
	}

	a.thaw()
	endpoints(aURL, bURL)
	// And it is really used again: with the other member frozen now, the
	// client still gets answers, from it alone.
	b.freeze()
	defer b.thaw()
	for slow := false; !slow; {
		slow = get()
	}
	endpoints(aURL)
	for i := range 10 {
		if get() {
			t.Fatalf("get %d with the thawed member back still waited on the frozen one", i)
		}
	}
}

// A write that a frozen member did not answer is not retried by etcd's
// client; the caller repeats it. After AwaitMemberCheck the repeat goes
// to the live member, every time. Without it, in a client busy with other
// requests (as every service is: here, reads in the background), the
// balancer's turn sends about every other repeat back to the frozen
// member before the guard has decided.
func TestRepeatAfterAwaitMemberCheckGoesToALiveMember(t *testing.T) {
	env := testenv.Start(t)
	target := strings.TrimPrefix(env.EtcdEndpoint, "http://")
	ctx := t.Context()
	for i := range 5 {
		a, b := newFreezingProxy(t, target), newFreezingProxy(t, target)
		cli, err := store.ConnectTimeout(ctx, "http://"+a.addr+",http://"+b.addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		awaitBothInUse(t, cli, a, b)
		busy, stop := context.WithCancel(ctx)
		go func() {
			for busy.Err() == nil {
				_, _ = cli.Get(busy, "/guard/r")
				time.Sleep(time.Millisecond)
			}
		}()
		a.freeze()
		put := func() error {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := cli.Put(rctx, "/guard/w", "1")
			return err
		}
		for try := 0; err == nil; try++ {
			if try == 100 {
				t.Fatalf("client %d: 100 puts and none went to the frozen member", i)
			}
			err = put()
		}
		if !store.Unanswered(err) {
			t.Fatalf("client %d: put with one member frozen: %v, want it unanswered", i, err)
		}
		store.AwaitMemberCheck(ctx, cli)
		if err := put(); err != nil {
			t.Errorf("client %d: the repeat after AwaitMemberCheck: %v", i, err)
		}
		stop()
		a.thaw()
		_ = cli.Close()
	}
}

// Watches on a member that freezes end as soon as the guard has found the
// member silent, not after their own stall; watches on the live member go
// on. (Compose pause-etcd: an agent's assignment watch on the frozen
// leader held its gang's start for the whole stall.)
func TestWatchesEndWhenTheGuardLeavesTheirMemberOut(t *testing.T) {
	_, cli, a, _ := clientThroughTwoProxies(t)
	ctx := t.Context()
	// Each watch on a stream of its own, which the balancer hands to the
	// members in turn: about half on each.
	var watches []*store.LiveWatch
	for i := range 10 {
		w := store.Watch(ctx, cli, fmt.Sprintf("/guardwatch/%d", i), 0)
		watches = append(watches, w)
	}
	time.Sleep(500 * time.Millisecond) // every watch created
	a.freeze()
	defer a.thaw()
	ended := make(chan int, len(watches))
	for i, w := range watches {
		go func() {
			for range w.C {
			}
			ended <- i
		}()
	}
	deadline := time.After(store.WatchStall + 3*time.Second)
	count := 0
	for done := false; !done; {
		select {
		case i := <-ended:
			count++
			if err := watches[i].Err(); err == nil || !strings.Contains(err.Error(), "left a silent member out") {
				t.Errorf("watch %d ended with %v, want it ended by the guard's verdict", i, err)
			}
		case <-deadline:
			done = true
		}
	}
	if count == 0 || count == len(watches) {
		t.Fatalf("%d of %d watches ended; want those on the frozen member only (some, not all)", count, len(watches))
	}
}
