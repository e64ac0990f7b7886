package store

import (
	"context"
	"sync/atomic"

	"github.com/cockroachdb/errors"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

// Group commit.
//
// Gang's reservations, launch barriers and releases are small, independent
// transactions, hundreds a second under load, and most of what each costs
// is per transaction rather than per key: a gRPC call on both sides, a
// raft entry, a WAL record and an apply pass. GroupKV commits the
// transactions that arrive while others are in flight as one: each member
// goes in as a nested transaction (its own If, Then and Else), so each gets
// its own answer, in one round trip.
//
// That is exact when no member writes a key another one compares, reads or
// writes, in any of its branches (keySet.overlaps checks it on the keys
// and ranges themselves: a whole-node claim's prefix compare overlaps another
// gang's GPU claim on that node). etcd evaluates every nested compare
// before it applies anything, so each member sees what it would have seen
// committed alone, before or after the others, and writes the same keys.
// The one trace of the group is the revision: its members share the
// group's, as their header and as the ModRevision of what they wrote.
//
// A group etcd refuses as a whole before applying any of it (one member's
// lease is gone, say) is committed member by member; any other error
// leaves every member's outcome unknown, as it would have left one
// transaction's. A transaction committed alone (nothing else waiting, or
// not groupable) goes out on its caller's context, as without GroupKV;
// a group goes out on GroupKV's.

// GroupKV is a clientv3.KV whose transactions are group-committed; every
// other call passes through.
type GroupKV struct {
	clientv3.KV
	// ctx bounds group commits (each attempt is bounded by the client's
	// request timeout, and a write is never retried: see attemptTimeout).
	ctx  context.Context
	reqs chan *groupReq
	// Counters, for tests: transactions asked for, etcd transactions
	// sent, and groups refused whole and committed member by member.
	asked, sent, split atomic.Int64
}

// Group limits: etcd refuses a transaction of more than its --max-txn-ops
// compares or ops (MaxTxnOps here; a quarter of it leaves room for any
// one transaction) or over its request size (1.5 MiB by default).
const (
	groupMaxTxns  = 64
	groupMaxOps   = MaxTxnOps / 4
	groupMaxBytes = 512 << 10
)

// NewGroupKV starts committers transactions at a time (at least 1) on kv
// until ctx ends; then transactions pass through one by one, the ones
// still waiting included.
func NewGroupKV(ctx context.Context, kv clientv3.KV, committers int) *GroupKV {
	g := &GroupKV{KV: kv, ctx: ctx, reqs: make(chan *groupReq, 1024)}
	for range max(committers, 1) {
		go g.commitLoop()
	}
	return g
}

// Stats reports the transactions asked for, the etcd transactions sent
// for them, and how many groups etcd refused whole, which were then
// committed member by member.
func (g *GroupKV) Stats() (asked, sent, split int64) {
	return g.asked.Load(), g.sent.Load(), g.split.Load()
}

// Txn starts a transaction that Commit group-commits.
func (g *GroupKV) Txn(ctx context.Context) clientv3.Txn {
	return &groupTxn{g: g, ctx: ctx}
}

type groupTxn struct {
	g         *GroupKV
	ctx       context.Context
	cmps      []clientv3.Cmp
	then, els []clientv3.Op
}

func (t *groupTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *groupTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.then = append(t.then, ops...)
	return t
}

func (t *groupTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.els = append(t.els, ops...)
	return t
}

// Commit waits for the transaction's group and returns what the
// transaction alone would have.
func (t *groupTxn) Commit() (*clientv3.TxnResponse, error) {
	g := t.g
	g.asked.Add(1)
	keys, ok := keySetOf(t.cmps, t.then, t.els)
	if !ok || g.ctx.Err() != nil {
		return t.alone()
	}
	r := &groupReq{txn: t, keys: keys, done: make(chan groupResult, 1)}
	select {
	case g.reqs <- r:
	case <-t.ctx.Done():
		return nil, errors.Wrap(t.ctx.Err(), "etcd transaction")
	case <-g.ctx.Done():
		return t.alone()
	}
	select {
	case res := <-r.done:
		return res.resp, res.err
	case <-t.ctx.Done():
	case <-g.ctx.Done():
	}
	if r.taken.CompareAndSwap(false, true) {
		// No committer took it, and none will: it was never sent.
		if t.ctx.Err() != nil {
			return nil, errors.Wrap(t.ctx.Err(), "etcd transaction")
		}
		return t.alone()
	}
	if t.ctx.Err() != nil {
		select {
		case res := <-r.done: // answered as the caller gave up
			return res.resp, res.err
		default:
		}
		// Given up on, like any write: it may still be applied.
		return nil, errors.Wrap(t.ctx.Err(), "etcd transaction")
	}
	res := <-r.done // being committed: each attempt is bounded (attemptTimeout)
	return res.resp, res.err
}

// alone commits the transaction by itself, on its caller's context.
func (t *groupTxn) alone() (*clientv3.TxnResponse, error) {
	t.g.sent.Add(1)
	return t.g.KV.Txn(t.ctx).If(t.cmps...).Then(t.then...).Else(t.els...).Commit()
}

type groupReq struct {
	txn  *groupTxn
	keys keySet
	done chan groupResult
	// taken is set by the committer that commits it, or by its caller
	// giving up on it first: whoever sets it decides.
	taken atomic.Bool
}

type groupResult struct {
	resp *clientv3.TxnResponse
	err  error
}

// commitLoop takes a waiting transaction, gathers the ones waiting behind
// it that can join it, and commits them; one that cannot join opens the
// next group. What is left waiting when ctx ends, its callers commit alone.
func (g *GroupKV) commitLoop() {
	var next *groupReq
	for {
		first := next
		next = nil
		for first == nil {
			select {
			case r := <-g.reqs:
				if r.taken.CompareAndSwap(false, true) {
					first = r
				}
			case <-g.ctx.Done():
				return
			}
		}
		group := []*groupReq{first}
		var all keySet
		all.add(first.keys)
		ops, size := first.keys.ops, first.keys.bytes
	gather:
		for len(group) < groupMaxTxns && g.ctx.Err() == nil {
			select {
			case r := <-g.reqs:
				if !r.taken.CompareAndSwap(false, true) {
					continue // its caller gave up on it
				}
				if ops+r.keys.ops > groupMaxOps || size+r.keys.bytes > groupMaxBytes || all.overlaps(r.keys) {
					next = r
					break gather
				}
				group = append(group, r)
				all.add(r.keys)
				ops, size = ops+r.keys.ops, size+r.keys.bytes
			default:
				break gather
			}
		}
		g.commit(group)
	}
}

func (g *GroupKV) commit(group []*groupReq) {
	if len(group) == 1 || g.ctx.Err() != nil {
		// Alone, or stopping (a group would go out on an ended context):
		// each on its caller's context.
		for _, r := range group {
			resp, err := r.txn.alone()
			r.done <- groupResult{resp, err}
		}
		return
	}
	nested := make([]clientv3.Op, len(group))
	for i, r := range group {
		nested[i] = clientv3.OpTxn(r.txn.cmps, r.txn.then, r.txn.els)
	}
	g.sent.Add(1)
	resp, err := g.KV.Txn(g.ctx).Then(nested...).Commit()
	if err != nil && notApplied(err) {
		g.split.Add(1)
		for _, r := range group {
			resp, err := r.txn.alone()
			r.done <- groupResult{resp, err}
		}
		return
	}
	if err == nil && len(resp.Responses) != len(group) {
		err = errors.Newf("etcd answered a group of %d transactions with %d responses", len(group), len(resp.Responses))
	}
	for i, r := range group {
		var one *pb.TxnResponse
		if err == nil {
			if one = resp.Responses[i].GetResponseTxn(); one == nil {
				err = errors.Newf("etcd answered transaction %d of a group with no transaction response", i)
			}
		}
		if err != nil {
			// Whether it was applied is unknown, as for any one of them.
			r.done <- groupResult{nil, errors.Wrap(err, "etcd transaction (group-committed)")}
			continue
		}
		r.done <- groupResult{resp: &clientv3.TxnResponse{
			Header:    resp.Header,
			Succeeded: one.GetSucceeded(),
			Responses: one.GetResponses(),
		}}
	}
}

// keySet is what one transaction touches in any branch: single keys and
// ranges ([from, end); end "\x00" is every key from from on), the ones
// it writes apart.
type keySet struct {
	reads, writes       map[string]bool
	readRanges, wranges []keyRange
	ops, bytes          int
}

type keyRange struct{ from, end string }

// keySetOf collects a transaction's keys; ok is false for one it cannot
// group (a nested transaction).
func keySetOf(cmps []clientv3.Cmp, then, els []clientv3.Op) (keySet, bool) {
	ks := keySet{reads: map[string]bool{}, writes: map[string]bool{}, ops: max(len(cmps), len(then), len(els))}
	for _, c := range cmps {
		pc := c.GetCompare()
		ks.note(false, string(pc.Key), string(pc.RangeEnd))
		ks.bytes += len(pc.Key) + len(pc.RangeEnd) + len(c.ValueBytes()) + 16
	}
	for _, ops := range [][]clientv3.Op{then, els} {
		for _, op := range ops {
			switch {
			case op.IsTxn():
				return keySet{}, false
			case op.IsPut(), op.IsDelete():
				ks.note(true, string(op.KeyBytes()), string(op.RangeBytes()))
			default:
				ks.note(false, string(op.KeyBytes()), string(op.RangeBytes()))
			}
			ks.bytes += len(op.KeyBytes()) + len(op.RangeBytes()) + len(op.ValueBytes()) + 16
		}
	}
	return ks, true
}

func (ks *keySet) note(write bool, key, end string) {
	switch {
	case end == "" && write:
		ks.writes[key] = true
	case end == "":
		ks.reads[key] = true
	case write:
		ks.wranges = append(ks.wranges, keyRange{key, end})
	default:
		ks.readRanges = append(ks.readRanges, keyRange{key, end})
	}
}

// add merges o into a group's key set.
func (ks *keySet) add(o keySet) {
	if ks.reads == nil {
		ks.reads, ks.writes = map[string]bool{}, map[string]bool{}
	}
	for k := range o.reads {
		ks.reads[k] = true
	}
	for k := range o.writes {
		ks.writes[k] = true
	}
	ks.readRanges = append(ks.readRanges, o.readRanges...)
	ks.wranges = append(ks.wranges, o.wranges...)
}

// overlaps reports whether o writes what ks touches or touches what ks
// writes.
func (ks *keySet) overlaps(o keySet) bool {
	for k := range o.writes {
		if ks.reads[k] || ks.writes[k] || inRanges(k, ks.readRanges) || inRanges(k, ks.wranges) {
			return true
		}
	}
	for k := range o.reads {
		if ks.writes[k] || inRanges(k, ks.wranges) {
			return true
		}
	}
	for _, r := range o.wranges {
		if r.meetsAny(ks.writes, ks.wranges) || r.meetsAny(ks.reads, ks.readRanges) {
			return true
		}
	}
	for _, r := range o.readRanges {
		if r.meetsAny(ks.writes, ks.wranges) {
			return true
		}
	}
	return false
}

// meetsAny reports whether r holds one of keys or meets one of ranges.
func (r keyRange) meetsAny(keys map[string]bool, ranges []keyRange) bool {
	for k := range keys {
		if r.holds(k) {
			return true
		}
	}
	for _, o := range ranges {
		if r.meets(o) {
			return true
		}
	}
	return false
}

func inRanges(key string, rs []keyRange) bool {
	for _, r := range rs {
		if r.holds(key) {
			return true
		}
	}
	return false
}

// holds reports whether key is in r. etcd's range end "\x00" means every
// key from r.from on.
func (r keyRange) holds(key string) bool {
	return key >= r.from && (r.end == "\x00" || key < r.end)
}

// meets reports whether two ranges share a key.
func (r keyRange) meets(o keyRange) bool {
	return r.holds(o.from) || o.holds(r.from)
}

// notApplied reports whether etcd refused a group before applying any of
// it for something one member may cause alone (a lease gone, a request too
// large or malformed, a permission missing): the members are then
// committed one by one. Overload ("too many requests", a full database:
// ResourceExhausted) is not among them: splitting would only add load.
func notApplied(err error) bool {
	var ee rpctypes.EtcdError
	if !errors.As(err, &ee) {
		return false
	}
	switch ee.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.PermissionDenied, codes.OutOfRange:
		return true
	}
	return false
}
