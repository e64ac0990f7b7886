package store

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// WatchStall is how long a watch may go without any answer from its etcd
// member, while a progress request is outstanding, before LiveWatch gives
// up on it. Progress requests go out every WatchStall/3 of quiet. A live
// member answers one in milliseconds; a false alarm costs a reload.
const WatchStall = 2 * time.Second

// ErrMemberSilent marks a LiveWatch that ended because its etcd member
// stopped answering (errors.Is): another member may serve it, so the
// caller watches again at once, unlike after an error etcd answered.
var ErrMemberSilent = errors.New("etcd member silent")

// LiveWatch is one etcd watch that notices when its member stops
// answering. A watch is a long-lived stream on one member; if that member
// freezes (a hung VM, a stalled disk: the connection stays open, gRPC's
// pings notice only after 11 s) the watch would wait silently until it
// thaws, and whatever it feeds (a cache, an agent's assignments) would go
// stale. So it asks for progress when quiet and ends if none comes.
type LiveWatch struct {
	// C delivers the watch's responses; it is closed when the watch ends.
	C   <-chan clientv3.WatchResponse
	err error
	cli *clientv3.Client

	mu     sync.Mutex
	stream context.Context // the created watch's: its metadata names its stream
}

// RequestProgress asks etcd to tell the watch how far it has seen, even
// with nothing to deliver (a progress notification on C). It gives up
// after WatchStall: the client hands the request to the stream's own
// loop, which a frozen member can block (a send waiting on a flow-control
// window it never opens). Before the watch is created it does nothing.
func (w *LiveWatch) RequestProgress() {
	w.mu.Lock()
	stream := w.stream
	w.mu.Unlock()
	if stream == nil {
		return
	}
	ctx, cancel := context.WithTimeout(stream, WatchStall)
	defer cancel()
	_ = w.cli.RequestProgress(ctx)
}

// Err says why C was closed: nil if ctx ended, otherwise the watch's
// error or the stall (marked ErrMemberSilent).
func (w *LiveWatch) Err() error { return w.err }

// Watch starts a LiveWatch of key (with opts, as for clientv3.Watch, but
// without WithRev) that delivers the changes made after revision after (0:
// from when the member creates the watch, which may be after Watch
// returns: a caller that must miss nothing passes the revision it read
// at). It runs on a gRPC stream of its own (clientv3 shares one stream
// between watches with the same context metadata, so a stalled stream
// would take every watch on it along), and requires the member to have a
// leader. Watch does not wait for the member: one that does not create
// the watch within watchHedge is asked again on another stream (see open),
// and if neither creates it within WatchStall it ends as a stall does.
//
// The watch starts at after itself, not after+1, and drops the events of
// that revision: etcd answers a progress request only once its revision
// has reached every watch's start, so a watch started one past the current
// revision of an idle cluster would get no answer, look stalled, and be
// reopened every few seconds for nothing.
func Watch(ctx context.Context, cli *clientv3.Client, key string, after int64, opts ...clientv3.OpOption) *LiveWatch {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	opts = append(opts, clientv3.WithProgressNotify())
	if after > 0 {
		opts = append(opts, clientv3.WithRev(after))
	}
	out := make(chan clientv3.WatchResponse)
	w := &LiveWatch{C: out, cli: cli}
	go func() {
		defer close(out)
		defer cancel()
		in, stream, err := open(wctx, cli, key, opts)
		if err != nil {
			if ctx.Err() == nil {
				w.err = err
			}
			return
		}
		w.mu.Lock()
		w.stream = stream
		w.mu.Unlock()
		quiet := time.NewTimer(WatchStall / 3)
		defer quiet.Stop()
		var asked time.Time // when progress was asked for with no answer since
		guard := guardOf(cli)
		leftOut := guard.leftOutNews()
		for {
			select {
			case resp, ok := <-in:
				if !ok {
					if ctx.Err() == nil {
						w.err = errors.New("watch closed")
					}
					return
				}
				if err := resp.Err(); err != nil {
					w.err = err
					return
				}
				asked = time.Time{}
				quiet.Reset(WatchStall / 3)
				// Before dropping the start revision's events: they count
				// towards a full batch.
				resp.Header = &etcdserverpb.ResponseHeader{
					ClusterId: resp.Header.ClusterId, MemberId: resp.Header.MemberId,
					Revision: seenThrough(resp), RaftTerm: resp.Header.RaftTerm,
				}
				resp.Events = eventsAfter(resp.Events, after)
				select {
				case out <- resp:
				case <-ctx.Done():
					return
				}
			case <-leftOut:
				// The guard found a member silent. If this watch's own
				// member is silent too, it is that one: end now rather than
				// wait out the stall (a live member answers a progress
				// request in milliseconds).
				leftOut = guard.leftOutNews()
				if !asked.IsZero() && time.Since(asked) >= silentAfter {
					w.err = errors.Mark(errors.Newf("etcd member gave no answer to a progress request in %s, and the client left a silent member out", time.Since(asked).Round(time.Millisecond)), ErrMemberSilent)
					return
				}
			case <-quiet.C:
				switch {
				case asked.IsZero():
					asked = time.Now()
					// Not inline: RequestProgress can block on a frozen
					// member, and the stall must still be noticed then.
					go w.RequestProgress()
				case time.Since(asked) >= WatchStall:
					guard.notice()
					w.err = errors.Mark(errors.Newf("etcd member gave no answer to a progress request in %s", WatchStall), ErrMemberSilent)
					return
				default:
					// Unanswered for a quiet period already: have the guard
					// ask the members, without waiting for the stall.
					guard.notice()
				}
				quiet.Reset(WatchStall / 3)
			case <-ctx.Done():
				return
			}
		}
	}()
	return w
}

// open starts the etcd watch and returns it with the context it was
// opened with (its metadata names its stream). etcd's client returns a
// watch only once the member has answered that it created it, which a
// frozen member never does. So it is opened aside; while no member has
// created it, it is opened again every watchHedge on a stream of its own,
// which the client usually sends to another member, and whichever is
// created first is kept (the others are cancelled, which unblocks the
// client).
// Without the other tries, a watch sent to the frozen member would cost
// the whole WatchStall, and the one that replaces it has the same chance
// of going there again. open gives up after WatchStall.
func open(ctx context.Context, cli *clientv3.Client, key string, opts []clientv3.OpOption) (clientv3.WatchChan, context.Context, error) {
	type try struct {
		in     clientv3.WatchChan
		stream context.Context
		cancel context.CancelFunc
	}
	// Room for every try's answer: one that comes after open returned
	// (a try cancelled, or created too late) must not block its goroutine.
	created := make(chan try, watchTries)
	var tries []try
	start := func() {
		// Watches whose contexts carry the same metadata share a stream.
		stream, cancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, "lockstep-watch", strconv.FormatUint(rand.Uint64(), 36)))
		t := try{stream: stream, cancel: cancel}
		tries = append(tries, t)
		go func() {
			t.in = cli.Watch(stream, key, opts...)
			created <- t
		}()
	}
	// Every try but the one kept is cancelled.
	keep := func(kept context.Context) {
		for _, t := range tries {
			if t.stream != kept {
				t.cancel()
			}
		}
	}
	start()
	// Another try every watchHedge, not one: the client's balancer picks
	// each stream's member afresh (round robin from a random start,
	// restarted whenever a connection changes state), so a second try can
	// land on the frozen member too.
	hedge := time.NewTicker(watchHedge)
	defer hedge.Stop()
	stall := time.NewTimer(WatchStall)
	defer stall.Stop()
	for {
		select {
		case t := <-created:
			keep(t.stream)
			return t.in, t.stream, nil
		case <-hedge.C:
			noticeUnanswered(cli)
			if len(tries) < watchTries {
				start()
			}
		case <-stall.C:
			noticeUnanswered(cli)
			keep(nil)
			return nil, nil, errors.Mark(errors.Newf("etcd member gave no answer to the watch's creation in %s", WatchStall), ErrMemberSilent)
		case <-ctx.Done():
			keep(nil)
			return nil, nil, ctx.Err()
		}
	}
}

// silentAfter is how long a progress request must have gone unanswered
// for its watch to end when the guard leaves a member out: long past a
// live member's answer, so only the watches on the member left out end.
const silentAfter = 250 * time.Millisecond

// watchHedge is how long open waits for a member to create a watch before
// asking again: a live member creates it in milliseconds.
const watchHedge = WatchStall / 4

// watchTries bounds the tries of one open: one every watchHedge until
// WatchStall.
const watchTries = int(WatchStall/watchHedge) + 1

// etcdWatchBatchRevs is how many distinct revisions etcd sends a watcher
// that is catching up in one response (its watchBatchMaxRevs).
const etcdWatchBatchRevs = 1000

// seenThrough is the revision a watch response shows its watcher has seen
// everything up to: its header revision (a progress notification, or the
// events up to now), except in a response of a full catch-up batch, which
// etcd stamps with its current revision though more events follow
// (watchable_store.go, syncWatchers): only its last event's revision.
func seenThrough(resp clientv3.WatchResponse) int64 {
	distinct, last := 0, int64(0)
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision != last {
			distinct, last = distinct+1, ev.Kv.ModRevision
		}
	}
	if distinct >= etcdWatchBatchRevs {
		return last
	}
	return resp.Header.Revision
}

// eventsAfter drops the events at or before revision after (in place).
func eventsAfter(evs []*clientv3.Event, after int64) []*clientv3.Event {
	return slices.DeleteFunc(evs, func(ev *clientv3.Event) bool { return ev.Kv.ModRevision <= after })
}
