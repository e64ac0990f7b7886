package gang

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// etcdWatchers is how many watchers the embedded etcd server holds.
func etcdWatchers(t *testing.T) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "etcd_debugging_mvcc_watcher_total" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("etcd_debugging_mvcc_watcher_total not found")
	return 0
}

// A wait for a job's ranks to be gone ends its watch once they are: one
// left open held a goroutine, a stream and a server-side watcher for as
// long as the replica served, for every job waited for.
func TestRankWaitEndsItsWatch(t *testing.T) {
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &rankWaits{ctx: ctx, cli: env.Etcd, log: slog.New(slog.DiscardHandler)}
	before := etcdWatchers(t)
	for i := range 3 {
		keys := []string{fmt.Sprintf("/lockstep/v1/running/n1/job-%d", i), fmt.Sprintf("/lockstep/v1/running/n2/job-%d", i)}
		var rev int64
		for _, k := range keys {
			resp, err := env.Etcd.Put(ctx, k, "x")
			if err != nil {
				t.Fatal(err)
			}
			rev = resp.Header.Revision
		}
		done := make(chan bool, 1)
		go func() { done <- w.untilGone(fmt.Sprintf("job-%d", i), keys, rev) }()
		for _, k := range keys {
			if _, err := env.Etcd.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case gone := <-done:
			if !gone {
				t.Fatal("untilGone returned false while its context lives")
			}
		case <-time.After(20 * time.Second):
			t.Fatal("untilGone did not see the keys go")
		}
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if n := etcdWatchers(t); n > before {
			return fmt.Errorf("etcd holds %v watchers, %v before the waits", n, before)
		}
		return nil
	})
}
