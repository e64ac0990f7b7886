package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// onNodes is an allocation of job on nodes, one GPU each.
func onNodes(job string, attempt int, nodes ...string) domain.Allocation {
	a := domain.Allocation{JobID: job, Attempt: attempt, State: domain.AllocReserved,
		Placement: domain.Placement{MasterAddr: nodes[0], MasterPort: 29500 + attempt}}
	for _, n := range nodes {
		a.Placement.Nodes = append(a.Placement.Nodes, domain.NodePlacement{Node: n, GPUs: []int{0}})
	}
	return a
}

// registered puts node keys and returns their revisions.
func registered(t *testing.T, kv clientv3.KV, nodes ...string) map[string]int64 {
	t.Helper()
	revs := map[string]int64{}
	for _, n := range nodes {
		resp, err := kv.Put(context.Background(), store.NodeKey(n), store.MustJSON(domain.Node{Name: n, GPUs: 2}))
		if err != nil {
			t.Fatal(err)
		}
		revs[n] = resp.Header.Revision
	}
	return revs
}

// runningRead lists the running keys a failed reservation read.
func runningRead(resp *clientv3.TxnResponse) []string {
	var read []string
	for _, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().Kvs {
			if strings.HasPrefix(string(kv.Key), store.RunningPrefix) {
				read = append(read, string(kv.Key))
			}
		}
	}
	return read
}

// A reservation of a job waits for the job's running keys on the nodes of
// its previous reservation (its footprint), though the new placement is
// elsewhere; another job's keys, even on the new nodes, do not hold it
// back. That holds for a first attempt too, which commits without reading
// the footprint first (an earlier reservation of it was released without
// a requeue).
func TestReservationWaitsForTheJobsRunningKeys(t *testing.T) {
	for _, attempt := range []int{2, 1} {
		t.Run(fmt.Sprintf("attempt %d", attempt), func(t *testing.T) { waitsForRunningKeys(t, attempt) })
	}
}

func waitsForRunningKeys(t *testing.T, secondAttempt int) {
	env := testenv.Start(t)
	ctx := context.Background()
	revs := registered(t, env.Etcd, "n1", "n2")
	first := onNodes("job", 1, "n2")
	if ok, _, err := store.Reserve(ctx, env.Etcd, first, nil, revs, 0); err != nil || !ok {
		t.Fatalf("attempt 1 not reserved (ok %v, err %v)", ok, err)
	}
	// n2's agent started the ranks; then attempt 1 was released, and the
	// ranks are still being stopped.
	for _, k := range []string{store.RunningKey("n2", "job"), store.RunningKey("n1", "job-2")} {
		if _, err := env.Etcd.Put(ctx, k, store.MustJSON(store.Running{Attempt: 1})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Etcd.Txn(ctx).Then(store.AllocationDeletes(first)...).Commit(); err != nil {
		t.Fatal(err)
	}

	second := onNodes("job", secondAttempt, "n1")
	ok, resp, err := store.Reserve(ctx, env.Etcd, second, nil, revs, 0)
	if err != nil || ok {
		t.Fatalf("reserved on n1 beside ranks of attempt 1 on n2 (ok %v, err %v)", ok, err)
	}
	if read := runningRead(resp); !reflect.DeepEqual(read, []string{store.RunningKey("n2", "job")}) {
		t.Errorf("the failed reservation read running keys %v, want only the job's own", read)
	}
	if _, err := env.Etcd.Delete(ctx, store.RunningKey("n2", "job")); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := store.Reserve(ctx, env.Etcd, second, nil, revs, 0); err != nil || !ok {
		t.Fatalf("not reserved once the job's ranks are gone (ok %v, err %v)", ok, err)
	}
	var f store.Footprint
	if found, _, err := store.GetJSON(ctx, env.Etcd, store.FootprintKey("job"), &f); err != nil || !found ||
		!reflect.DeepEqual(f, store.Footprint{JobID: "job", Attempt: secondAttempt, Nodes: []string{"n1"}}) {
		t.Errorf("footprint after attempt %d: %+v (found %v, err %v)", secondAttempt, f, found, err)
	}
}

// Two reservations built on one read of the footprint cannot both commit:
// the second would not compare the first one's nodes.
func TestReservationComparesTheFootprintRead(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	revs := registered(t, env.Etcd, "n1", "n2")
	prior, err := store.ReadPrior(ctx, env.Etcd, "job")
	if err != nil || prior.ModRev != 0 || len(prior.Nodes) != 0 {
		t.Fatalf("prior of a job never reserved: %+v, %v", prior, err)
	}
	a := onNodes("job", 1, "n1")
	if ok, _, err := store.Reserve(ctx, env.Etcd, a, nil, revs, 0); err != nil || !ok {
		t.Fatalf("not reserved (ok %v, err %v)", ok, err)
	}
	if _, err := env.Etcd.Txn(ctx).Then(store.AllocationDeletes(a)...).Commit(); err != nil {
		t.Fatal(err)
	}
	cmps, then, _ := store.ReservationTxn(onNodes("job", 2, "n2"), nil, revs, prior, 0)
	resp, err := env.Etcd.Txn(ctx).If(cmps...).Then(then...).Commit()
	if err != nil || resp.Succeeded {
		t.Fatalf("committed on a stale footprint (err %v)", err)
	}
}

// A footprint that does not decode names no nodes to trust: the nodes
// are found from the running keys and the allocation instead.
func TestReadPriorOfAMalformedFootprint(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	puts := map[string]string{
		store.FootprintKey("job"):           `{"jobId":"job","attempt":1,"nodes":[]}`,
		store.RunningKey("n3", "job"):       `{}`,
		store.RunningKey("n4", "job-2"):     `{}`,
		store.AllocKey("job"):               store.MustJSON(onNodes("job", 1, "n1", "n2")),
		store.RunningKey("n5", "job-other"): `{}`,
	}
	for k, v := range puts {
		if _, err := env.Etcd.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	prior, err := store.ReadPrior(ctx, env.Etcd, "job")
	if err != nil {
		t.Fatal(err)
	}
	if got := store.RunningChecks(prior, domain.Placement{}); !reflect.DeepEqual(got, []string{"n1", "n2", "n3"}) || prior.ModRev == 0 {
		t.Errorf("prior %+v: nodes %v, want n1 n2 (allocation) n3 (running key) and the footprint's revision", prior, got)
	}
}

func TestRunningChecks(t *testing.T) {
	p := onNodes("job", 2, "b", "c").Placement
	for _, tc := range []struct {
		prior []string
		want  []string
	}{
		{nil, []string{"b", "c"}},
		{[]string{"c", "a"}, []string{"a", "b", "c"}},
		{[]string{"d", "b", "c"}, []string{"b", "c", "d"}},
	} {
		if got := store.RunningChecks(store.Prior{Nodes: tc.prior}, p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("prior %v: checks %v, want %v", tc.prior, got, tc.want)
		}
	}
}

func TestDecodeRunningNamesTheField(t *testing.T) {
	key := store.RunningKey("n1", "job")
	if key != store.RunningPrefix+"n1/job" || !strings.HasPrefix(key, store.NodeRunningPrefix("n1")) {
		t.Fatalf("running key %s is not under its node's prefix", key)
	}
	checkDecodeNamesTheField(t, func(v []byte) error { _, err := store.DecodeRunning(key, v); return err }, map[string]string{
		`{"jobId":"job","node":"n1","attempt":1}`:   "",
		`{"jobId":"other","node":"n1","attempt":1}`: key + ": jobId",
		`{"jobId":"job","node":"n2","attempt":1}`:   key + ": node",
		`{"jobId":"job","node":"n1","attempt":0}`:   key + ": attempt",
		`[`: key + ": undecodable",
	})
	for _, bad := range []string{store.RunningPrefix + "n1", store.RunningPrefix + "n1/job/x", store.RunningPrefix + "/job"} {
		if _, err := store.DecodeRunning(bad, []byte(`{"jobId":"job","node":"n1","attempt":1}`)); err == nil {
			t.Errorf("%s decoded as a running key", bad)
		}
	}
}

func TestDecodeFootprintNamesTheField(t *testing.T) {
	key := store.FootprintKey("job")
	checkDecodeNamesTheField(t, func(v []byte) error { _, err := store.DecodeFootprint(key, v); return err }, map[string]string{
		`{"jobId":"job","attempt":1,"nodes":["n1"]}`:   "",
		`{"jobId":"other","attempt":1,"nodes":["n1"]}`: key + ": jobId",
		`{"jobId":"job","attempt":0,"nodes":["n1"]}`:   key + ": attempt",
		`{"jobId":"job","attempt":1,"nodes":[]}`:       key + ": nodes",
		`{"jobId":"job","attempt":1,"nodes":["a/b"]}`:  key + ": nodes[0]",
		`[`: key + ": undecodable",
	})
}

// checkDecodeNamesTheField decodes each value: one whose want is "" must
// decode, any other must fail as malformed with an error starting want.
func checkDecodeNamesTheField(t *testing.T, decode func(value []byte) error, cases map[string]string) {
	t.Helper()
	for value, want := range cases {
		err := decode([]byte(value))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", value, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want) || !store.IsMalformed(err)):
			t.Errorf("%s: error %v, want a malformed error starting %q", value, err, want)
		}
	}
}

// A 64-node gang of 8 GPUs per node, placed away from its previous
// reservation's 64 nodes, on nodes with more GPUs than that (so claimed
// GPU by GPU), is the largest compare set for that size: 64 node
// revisions, 512 claims and 64 whole-node claims' absence, the port, the
// allocation, 128 running keys and the footprint. etcd (as embedded,
// store.MaxTxnOps) takes it. On whole nodes the same gang is 64 claims.
func TestReservationOfA64NodeGang(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	gang := func(prefix string, attempt int) domain.Allocation {
		a := domain.Allocation{JobID: "big", Attempt: attempt, State: domain.AllocReserved,
			Placement: domain.Placement{MasterAddr: prefix + "00", MasterPort: 29500 + attempt}}
		for i := range 64 {
			a.Placement.Nodes = append(a.Placement.Nodes, domain.NodePlacement{
				Node: fmt.Sprintf("%s%02d", prefix, i), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
		}
		return a
	}
	first, second := gang("a", 1), gang("b", 2)
	revs := registered(t, env.Etcd, slices.Concat(first.Placement.NodeNames(), second.Placement.NodeNames())...)
	if ok, _, err := store.Reserve(ctx, env.Etcd, first, nil, revs, 0); err != nil || !ok {
		t.Fatalf("attempt 1 not reserved (ok %v, err %v)", ok, err)
	}
	if _, err := env.Etcd.Txn(ctx).Then(store.AllocationDeletes(first)...).Commit(); err != nil {
		t.Fatal(err)
	}
	prior, err := store.ReadPrior(ctx, env.Etcd, "big")
	if err != nil {
		t.Fatal(err)
	}
	cmps, then, els := store.ReservationTxn(second, nil, revs, prior, 0)
	if len(cmps) != 771 || len(then) != 515 || len(els) != 770 {
		t.Errorf("ops: %d compares, %d puts, %d reads; want 771, 515 (no assignments here), 770", len(cmps), len(then), len(els))
	}
	whole := second
	whole.WholeNodes = whole.Placement.NodeNames()
	cmps, then, els = store.ReservationTxn(whole, nil, revs, prior, 0)
	if len(cmps) != 259 || len(then) != 67 || len(els) != 258 {
		t.Errorf("whole nodes: %d compares, %d puts, %d reads; want 259, 67, 258", len(cmps), len(then), len(els))
	}
	if max(len(cmps), len(then), len(els)) > store.MaxTxnOps {
		t.Errorf("the reservation exceeds store.MaxTxnOps")
	}
	if ok, _, err := store.Reserve(ctx, env.Etcd, second, nil, revs, 0); err != nil || !ok {
		t.Fatalf("attempt 2 not reserved (ok %v, err %v)", ok, err)
	}
}
