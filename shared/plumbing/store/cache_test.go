package store_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The node caches hold only registrations that pass the node checks and
// describe the node their key names; a valid record overwritten with one
// that fails drops out instead of staying as it was.
func TestNodeCacheKeepsOnlyCheckedRecords(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	put := func(key string, v any) {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Etcd.Put(ctx, key, string(data)); err != nil {
			t.Fatal(err)
		}
	}
	good := domain.Node{Name: "n1", Addr: "n1", GPUs: 8}
	put(store.NodeKey("n1"), good)
	put(store.NodeKey("n2"), domain.Node{Name: "n1", Addr: "n1", GPUs: 8}) // n1 posing as n2
	put(store.NodeKey("n3"), domain.Node{Name: "n3", Addr: "n3", GPUs: -1})

	c := store.NodeCache(env.Etcd, slog.New(slog.DiscardHandler))
	go c.Run(ctx)
	<-c.Ready()
	if got := c.Snapshot(); len(got) != 1 || got[store.NodeKey("n1")].Name != "n1" {
		t.Fatalf("loaded %v, want only n1", got)
	}
	each := map[string]domain.Node{}
	c.Each(func(key string, n domain.Node) { each[key] = n })
	if !reflect.DeepEqual(each, c.Snapshot()) {
		t.Fatalf("Each gave %v, the snapshot %v", each, c.Snapshot())
	}

	put(store.NodeKey("n4"), domain.Node{Name: "n4", Addr: "n4", GPUs: 8})
	put(store.NodeKey("n1"), domain.Node{Name: "n1", Addr: "n1", GPUs: 8, NUMA: []domain.NUMANode{{ID: 0, GPUs: []int{9}}}})
	testenv.Eventually(t, 10*time.Second, func() error {
		got := c.Snapshot()
		if _, ok := got[store.NodeKey("n4")]; !ok {
			return errors.New("n4's registration never arrived")
		}
		if _, ok := got[store.NodeKey("n1")]; ok {
			return errors.Newf("n1 is still cached after a registration that fails the checks: %+v", got[store.NodeKey("n1")])
		}
		return nil
	})
}

// The drain cache holds only records of the job their key names: one at
// drains/x naming job y would have y's drain judged and drains/y deleted,
// never the record read.
func TestDrainCacheKeepsOnlyRecordsOfTheirKeysJob(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	d := domain.Drain{Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue}
	for key, rec := range map[string]domain.DrainRecord{
		store.DrainKey("j1"): {JobID: "j1", Attempt: 1, Drain: d},
		store.DrainKey("j2"): {JobID: "j1", Attempt: 1, Drain: d}, // j1's drain under j2's key
		store.DrainKey("j3"): {JobID: "j3", Attempt: 0, Drain: d},
		store.DrainKey("j4"): {JobID: "j4", Attempt: 1, Drain: d, Expected: []int{0}, Acks: map[int]domain.CheckpointRef{7: {Attempt: 1}}}, // an ack of a rank not asked
	} {
		if _, err := env.Etcd.Put(ctx, key, store.MustJSON(rec)); err != nil {
			t.Fatal(err)
		}
	}
	c := store.DrainCache(env.Etcd, slog.New(slog.DiscardHandler))
	go c.Run(ctx)
	<-c.Ready()
	if got := c.Snapshot(); len(got) != 1 || got[store.DrainKey("j1")].JobID != "j1" {
		t.Fatalf("loaded %v, want only j1's", got)
	}
}

// Placement's holdings cache drops exactly the records gang's reconciler
// releases as malformed (a placement naming a GPU twice, a job other than
// its key's). One that only fails the stricter domain checks (an exit code
// out of range) stays in it, GPUs and all: its claim keys stay too, and a
// view without it would offer those GPUs again and again. The strict
// cache drops all three.
func TestHoldingsCacheDropsWhatTheReconcilerReleases(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	alloc := func(job string, gpus []int, exited map[string]int) domain.Allocation {
		p := testenv.GangPlacement([]string{"n1"}, 8, 29500)
		if gpus != nil {
			p.Nodes[0].GPUs = gpus
		}
		return domain.Allocation{JobID: job, Attempt: 1, State: domain.AllocRunning, Exited: exited, Placement: p}
	}
	for key, rec := range map[string]domain.Allocation{
		store.AllocKey("ok"):      alloc("ok", nil, nil),
		store.AllocKey("oddexit"): alloc("oddexit", nil, map[string]int{"n1": 999}),
		store.AllocKey("twice"):   alloc("twice", []int{2, 2, 3, 4, 5, 6, 7, 0}, nil),
		store.AllocKey("other"):   alloc("ok", nil, nil),
	} {
		if _, err := env.Etcd.Put(ctx, key, store.MustJSON(rec)); err != nil {
			t.Fatal(err)
		}
		if _, err := store.DecodeAllocation(key, []byte(store.MustJSON(rec))); (err == nil) != (key == store.AllocKey("ok") || key == store.AllocKey("oddexit")) {
			t.Fatalf("%s: the reconciler's decoder says %v", key, err)
		}
	}
	holdings := store.HoldingsCache(env.Etcd, slog.New(slog.DiscardHandler))
	strict := store.AllocationCache(env.Etcd, slog.New(slog.DiscardHandler))
	for _, c := range []interface {
		Run(context.Context)
		Ready() <-chan struct{}
	}{holdings, strict} {
		go c.Run(ctx)
		<-c.Ready()
	}
	got := holdings.Snapshot()
	if len(got) != 2 || got[store.AllocKey("ok")].JobID != "ok" || got[store.AllocKey("oddexit")].JobID != "oddexit" {
		t.Errorf("holdings cache loaded %v, want ok and oddexit", slices.Sorted(maps.Keys(got)))
	}
	if s := strict.Snapshot(); len(s) != 1 {
		t.Errorf("the strict cache loaded %v, want only ok: the odd exit code fails the domain checks, the others the reconciler's", slices.Sorted(maps.Keys(s)))
	}
	// Read one by one, as the drain loop reads a drain's allocation.
	for _, id := range []string{"ok", "oddexit", "twice", "other", "absent"} {
		if _, found := strict.Get(store.AllocKey(id)); found != (id == "ok") {
			t.Errorf("the strict cache's Get of %s found %v", id, found)
		}
	}
}

// Through the watch, a gang's record rewritten within its attempt keeps
// its placement (OnChange says so, and placement skips the change), while
// one whose placement changed, or that now fails the checks, does not.
func TestHoldingsCacheKeepsAPlacementAcrossRewrites(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	type change struct {
		state domain.AllocState
		same  bool
		gone  bool
	}
	changes := make(chan change, 8)
	holdings := store.HoldingsCache(env.Etcd, slog.New(slog.DiscardHandler))
	holdings.OnChange = func(_ string, val, prev *store.Holding) {
		if val == nil {
			changes <- change{gone: true}
			return
		}
		changes <- change{state: val.State, same: val.SamePlacement(prev)}
	}
	go holdings.Run(ctx)
	<-holdings.Ready()

	rec := domain.Allocation{JobID: "j", Attempt: 1, State: domain.AllocReserved, Placement: testenv.GangPlacement([]string{"n1", "n2"}, 8, 29500)}
	put := func(a domain.Allocation) {
		t.Helper()
		if _, err := env.Etcd.Put(ctx, store.AllocKey("j"), store.MustJSON(a)); err != nil {
			t.Fatal(err)
		}
	}
	next := func() change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no change seen")
		}
		return change{}
	}
	// The first node of the cached placement, by address: the same
	// address after a rewrite means the placement was reused, not decoded.
	firstNode := func() *domain.NodePlacement {
		h, ok := holdings.Get(store.AllocKey("j"))
		if !ok {
			t.Fatal("record not in the cache")
		}
		return &h.Placement.Nodes[0]
	}
	put(rec)
	if c := next(); c.same || c.state != domain.AllocReserved {
		t.Errorf("first record: %+v, want reserved and new", c)
	}
	decoded := firstNode()
	rec.Started = map[string]bool{"n1": true}
	put(rec)
	rec.State, rec.Started = domain.AllocRunning, map[string]bool{"n1": true, "n2": true}
	put(rec)
	for _, want := range []domain.AllocState{domain.AllocReserved, domain.AllocRunning} {
		if c := next(); !c.same || c.state != want {
			t.Errorf("rewrite: %+v, want %s with the same placement", c, want)
		}
	}
	if got, _ := holdings.Get(store.AllocKey("j")); !reflect.DeepEqual(got.Placement, rec.Placement) || got.State != domain.AllocRunning {
		t.Errorf("cache holds %+v, want the running record", got.Allocation)
	}
	if firstNode() != decoded {
		t.Error("the rewrites' placement was decoded again, not reused")
	}
	rec.Placement.Nodes[1].GPUs = rec.Placement.Nodes[1].GPUs[:4]
	put(rec)
	if c := next(); c.same {
		t.Error("a changed placement was taken for the same")
	}
	if firstNode() == decoded {
		t.Error("a changed placement reused the old one")
	}
	if got, _ := holdings.Get(store.AllocKey("j")); !reflect.DeepEqual(got.Placement, rec.Placement) {
		t.Errorf("cache holds placement %+v, want %+v", got.Placement, rec.Placement)
	}
	rec.WholeNodes = []string{"n9"}
	put(rec)
	if c := next(); !c.gone {
		t.Errorf("a rewrite that fails the checks: %+v, want it dropped", c)
	}
}

// OnChange is given each change with the value it replaced, from the
// cache's own copy (the watch does not ask etcd for previous values): a
// new key has none, an update the value before it, a delete the last one.
func TestCacheOnChangeGivesThePreviousValue(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	type change struct{ val, prev int }
	changes := make(chan change, 10)
	c := store.NewCache(env.Etcd, "test-onchange/", func(_ string, v []byte) (int, error) {
		var n int
		err := json.Unmarshal(v, &n)
		return n, err
	}, slog.New(slog.DiscardHandler))
	// 0 stands for none: the values written are all positive.
	c.OnChange = func(_ string, val, prev *int) {
		var ch change
		if val != nil {
			ch.val = *val
		}
		if prev != nil {
			ch.prev = *prev
		}
		changes <- ch
	}
	go c.Run(ctx)
	<-c.Ready()
	for _, v := range []string{"1", "2", "3"} {
		if _, err := env.Etcd.Put(ctx, "test-onchange/k", v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Etcd.Delete(ctx, "test-onchange/k"); err != nil {
		t.Fatal(err)
	}
	want := []change{{1, 0}, {2, 1}, {3, 2}, {0, 3}}
	for i, w := range want {
		select {
		case got := <-changes:
			if got != w {
				t.Fatalf("change %d: got (val %d, prev %d), want (val %d, prev %d)", i, got.val, got.prev, w.val, w.prev)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("change %d never came", i)
		}
	}
}
