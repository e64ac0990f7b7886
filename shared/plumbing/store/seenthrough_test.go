package store

import (
	"testing"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A watcher catching up gets at most 1,000 distinct revisions a response,
// each stamped with etcd's current revision: a full batch shows only its
// own events seen (else CatchUp would pass on a view still behind);
// anything less, or a progress notification, shows the header revision.
func TestSeenThrough(t *testing.T) {
	resp := func(header int64, revs ...int64) clientv3.WatchResponse {
		r := clientv3.WatchResponse{Header: &etcdserverpb.ResponseHeader{Revision: header}}
		for _, rev := range revs {
			r.Events = append(r.Events, &clientv3.Event{Kv: &mvccpb.KeyValue{ModRevision: rev}})
		}
		return r
	}
	span := func(from, n int64) []int64 {
		var out []int64
		for i := range n {
			out = append(out, from+i, from+i) // two keys a revision (one Txn)
		}
		return out
	}
	for _, c := range []struct {
		name string
		resp clientv3.WatchResponse
		want int64
	}{
		{"progress notification", resp(5000), 5000},
		{"events up to now", resp(5000, span(4000, 999)...), 5000},
		{"a full catch-up batch", resp(5000, span(2000, 1000)...), 2999},
	} {
		if got := seenThrough(c.resp); got != c.want {
			t.Errorf("%s: seen through %d, want %d", c.name, got, c.want)
		}
	}
}
