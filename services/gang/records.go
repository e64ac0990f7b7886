package gang

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// records follows the jobs bucket with one watch and keeps, from the
// authoritative records only:
//
//   - the brief of every record that is not terminal, for the reconciler
//     (as jobs.Active does);
//   - the whole record of every pending job, with its KV revision, so that
//     a proposal made on the record gang already holds costs no KV read.
//     Proposals name a job; its spec (the command the agents run) comes
//     from here or from the KV, never from the message.
//
// Each update costs a brief decode, and a full one only while the job is
// pending. Like any watch it lags the bucket a little: a proposal newer
// than the record held here reads the KV.
type records struct {
	store *jobs.Store
	log   *slog.Logger

	mu        sync.RWMutex
	briefs    map[string]jobs.Brief
	pending   map[string]heldJob
	ready     chan struct{}
	readyOnce sync.Once
}

type heldJob struct {
	job domain.Job
	rev uint64
}

func newRecords(ctx context.Context, store *jobs.Store, log *slog.Logger) *records {
	r := &records{store: store, log: log, briefs: map[string]jobs.Brief{}, pending: map[string]heldJob{}, ready: make(chan struct{})}
	go r.run(ctx)
	return r
}

// Ready is closed once the first replay of the bucket is complete.
func (r *records) Ready() <-chan struct{} { return r.ready }

// Snapshot copies the briefs of the records that are not terminal.
func (r *records) Snapshot() map[string]jobs.Brief {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[string]jobs.Brief, len(r.briefs))
	for k, v := range r.briefs {
		out[k] = v
	}
	return out
}

// Pending returns the record of a pending job as last seen, with its
// revision.
func (r *records) Pending(id string) (domain.Job, uint64, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.pending[id]
	return h.job, h.rev, ok
}

func (r *records) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := r.follow(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("job records watch ended, following again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// follow replays the bucket into fresh maps, swaps them in when the replay
// is complete, then applies updates until the watch ends.
func (r *records) follow(ctx context.Context) error {
	w, err := r.store.Watch(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	briefs, pending := map[string]jobs.Brief{}, map[string]heldJob{}
	live := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("job records watch ended")
			}
			if e == nil {
				r.mu.Lock()
				r.briefs, r.pending, live = briefs, pending, true
				r.mu.Unlock()
				r.readyOnce.Do(func() { close(r.ready) })
				continue
			}
			if !live {
				r.apply(briefs, pending, e)
				continue
			}
			r.mu.Lock()
			r.apply(r.briefs, r.pending, e)
			r.mu.Unlock()
		}
	}
}

func (r *records) apply(briefs map[string]jobs.Brief, pending map[string]heldJob, e jetstream.KeyValueEntry) {
	id := e.Key()
	delete(pending, id)
	if e.Operation() != jetstream.KeyValuePut {
		delete(briefs, id)
		return
	}
	var b jobs.Brief
	if err := codec.Decode(e.Value(), &b); err != nil {
		r.log.Warn("undecodable job record", "job", id, "err", err)
		delete(briefs, id)
		return
	}
	if b.State.Terminal() {
		delete(briefs, id)
		return
	}
	briefs[id] = b
	if b.State != domain.StatePending {
		return
	}
	j, err := jobs.Decode(e.Value())
	if err != nil || j.ID != id {
		r.log.Warn("undecodable job record", "job", id, "err", err)
		return
	}
	pending[id] = heldJob{job: j, rev: e.Revision()}
}
