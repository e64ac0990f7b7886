package live

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/loadtest/report"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// EtcdWrites counts what the load wrote to etcd: write revisions (each a
// transaction, put or delete that changed something) and, by key family
// (the first segment under store.Prefix: alloc, claims, running, …), the
// keys put and deleted. It is read after the load from etcd's history, so
// the measurement costs the load nothing. On a shared cluster it includes
// other work's writes.
type EtcdWrites struct {
	Revisions int64                   `json:"revisions"`
	Families  map[string]KeyFamilyOps `json:"families"`
}

// KeyFamilyOps is how many keys of one family were put and deleted.
type KeyFamilyOps struct {
	Puts    int `json:"puts"`
	Deletes int `json:"deletes"`
}

// etcdRevision is etcd's current revision.
func etcdRevision(ctx context.Context, cli *clientv3.Client) (int64, error) {
	resp, err := cli.Get(ctx, store.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, errors.Wrap(err, "etcd revision")
	}
	return resp.Header.Revision, nil
}

// waitReleased waits, up to timeout, until no allocation of a job whose ID
// starts with prefix is left in etcd. A job's end is announced before its
// gang's keys are released, so a revision read as the last job ends can
// leave the last releases out of the writes counted.
func waitReleased(ctx context.Context, cli *clientv3.Client, prefix string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		resp, err := cli.Get(ctx, store.AllocKey(prefix), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil || resp.Count == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// etcdWritesBetween replays etcd's history after revision from up to and
// including to, counting the writes under store.Prefix.
func etcdWritesBetween(ctx context.Context, cli *clientv3.Client, from, to int64) (*EtcdWrites, error) {
	out := &EtcdWrites{Revisions: to - from, Families: map[string]KeyFamilyOps{}}
	if to <= from {
		return out, nil
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	w := cli.Watch(wctx, store.Prefix, clientv3.WithPrefix(), clientv3.WithRev(from+1))
	// etcd answers a progress request only once the watch has caught up,
	// and then says every event up to its revision has been sent: asked
	// until then, it ends the replay.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			_ = cli.RequestProgress(wctx)
		case resp, ok := <-w:
			if !ok {
				return nil, errors.Wrap(wctx.Err(), "replay etcd history")
			}
			if err := resp.Err(); err != nil {
				return nil, errors.Wrap(err, "replay etcd history")
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > to {
					return out, nil
				}
				family, _, _ := strings.Cut(strings.TrimPrefix(string(ev.Kv.Key), store.Prefix), "/")
				ops := out.Families[family]
				if ev.Type == clientv3.EventTypeDelete {
					ops.Deletes++
				} else {
					ops.Puts++
				}
				out.Families[family] = ops
			}
			if resp.IsProgressNotify() && resp.Header.Revision >= to {
				return out, nil
			}
		}
	}
}

// etcdWritesTable renders w per submitted job: one line of revisions,
// then the key families, most written first ("" when not counted).
func etcdWritesTable(w *EtcdWrites, submitted int) string {
	if w == nil || submitted == 0 {
		return ""
	}
	per := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/float64(submitted)) }
	families := slices.Collect(maps.Keys(w.Families))
	total := func(f string) int { return w.Families[f].Puts + w.Families[f].Deletes }
	slices.SortFunc(families, func(a, b string) int { return cmp.Or(cmp.Compare(total(b), total(a)), cmp.Compare(a, b)) })
	t := report.Table{Header: []string{"etcd key family", "puts", "deletes", "per submitted job"}}
	var keys int64
	for _, f := range families {
		ops := w.Families[f]
		keys += int64(total(f))
		t.Add(f+"/", report.Thousands(ops.Puts), report.Thousands(ops.Deletes), per(int64(total(f))))
	}
	t.Add("all", "", "", per(keys))
	return fmt.Sprintf("etcd during the load: %s write revisions (transactions, puts and deletes), %s per submitted job; keys written:\n\n%s\n",
		report.Thousands(int(w.Revisions)), per(w.Revisions), t.String())
}
