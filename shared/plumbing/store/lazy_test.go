package store_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A lazy cache decodes a value when it is read, once, and never a value
// overwritten before anyone read it; a value that fails its checks reads
// as absent, and hides the valid one it replaced.
func TestLazyCacheDecodesWhatIsReadOnce(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	// Written before the cache starts: its first load holds it undecoded.
	if _, err := env.Etcd.Put(ctx, "test-lazy/loaded", "7"); err != nil {
		t.Fatal(err)
	}
	var decoded atomic.Int32
	c := store.NewLazyCache(env.Etcd, "test-lazy/", func(_ string, v []byte) (int, error) {
		decoded.Add(1)
		var n int
		err := json.Unmarshal(v, &n)
		return n, err
	}, slog.New(slog.DiscardHandler))
	go c.Run(ctx)
	<-c.Ready()
	var rev int64
	put := func(key, value string) {
		t.Helper()
		resp, err := env.Etcd.Put(ctx, key, value)
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	caughtUp := func() {
		t.Helper()
		testenv.Eventually(t, 10*time.Second, func() error {
			if got := c.Rev(); got < rev {
				return fmt.Errorf("cache at revision %d, want %d", got, rev)
			}
			return nil
		})
	}
	for _, v := range []string{"1", "2", "3"} {
		put("test-lazy/a", v)
	}
	put("test-lazy/b", "4")
	caughtUp()
	if n := decoded.Load(); n != 0 {
		t.Fatalf("%d values decoded before any read", n)
	}
	for range 3 {
		if v, ok := c.Get("test-lazy/a"); !ok || v != 3 {
			t.Fatalf("Get = %d, %v; want 3", v, ok)
		}
	}
	if n := decoded.Load(); n != 1 {
		t.Errorf("%d decodes for three reads of one value, want 1", n)
	}
	if s := c.Snapshot(); len(s) != 3 || s["test-lazy/a"] != 3 || s["test-lazy/b"] != 4 || s["test-lazy/loaded"] != 7 {
		t.Errorf("Snapshot = %v", s)
	}
	if n := decoded.Load(); n != 3 {
		t.Errorf("%d decodes after the snapshot, want 3 (b's and the loaded one the new ones)", n)
	}
	if _, err := env.Etcd.Delete(ctx, "test-lazy/loaded"); err != nil {
		t.Fatal(err)
	}
	put("test-lazy/a", "not a number")
	caughtUp()
	// Readers at once, as the drain loop and a metrics scrape may be.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { c.Snapshot(); c.Get("test-lazy/a") })
	}
	wg.Wait()
	if v, ok := c.Get("test-lazy/a"); ok {
		t.Errorf("a value that fails its checks read as %d", v)
	}
	if s := c.Snapshot(); len(s) != 1 || s["test-lazy/b"] != 4 {
		t.Errorf("Snapshot = %v, want b only", s)
	}
}
