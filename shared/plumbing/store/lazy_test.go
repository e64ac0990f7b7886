package store_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
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
	if s := c.Snapshot(); len(s) != 2 || s["test-lazy/a"] != 3 || s["test-lazy/b"] != 4 {
		t.Errorf("Snapshot = %v", s)
	}
	if n := decoded.Load(); n != 2 {
		t.Errorf("%d decodes after the snapshot, want 2 (b's the only new one)", n)
	}
	put("test-lazy/a", "not a number")
	caughtUp()
	if v, ok := c.Get("test-lazy/a"); ok {
		t.Errorf("a value that fails its checks read as %d", v)
	}
	if s := c.Snapshot(); len(s) != 1 || s["test-lazy/b"] != 4 {
		t.Errorf("Snapshot = %v, want b only", s)
	}
}
