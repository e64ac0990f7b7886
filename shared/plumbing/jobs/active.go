package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Brief is the part of a job record a reconciler needs to compare it with
// etcd. Decoding only these fields skips the spec and placement, the bulk
// of a record: about a third of the CPU of a full decode.
type Brief struct {
	ID          string       `json:"id"`
	State       domain.State `json:"state"`
	Attempt     int          `json:"attempt"`
	TraceParent string       `json:"traceParent,omitempty"`
	// Owner lets admission count a user's pending jobs.
	Owner string `json:"owner,omitempty"`
}

// BriefOf is j's brief.
func BriefOf(j domain.Job) Brief {
	return Brief{ID: j.ID, State: j.State, Attempt: j.Attempt, TraceParent: j.TraceParent, Owner: j.Owner}
}

// Active follows the bucket with one long-lived watch and keeps the brief
// of every record that is not terminal. It costs a brief decode per record
// update, whatever the bucket's history holds: the bucket keeps finished
// jobs, and listing all of them on every reconciler pass grew with every
// job ever run.
//
// Like any watch it lags the bucket a little: confirm with Get before
// acting on an absence or on a state that makes you destroy something.
type Active struct {
	store *Store
	log   *slog.Logger

	mu        sync.RWMutex
	jobs      map[string]Brief
	ready     chan struct{}
	readyOnce sync.Once
}

var errWatchEnded = errors.New("job records watch ended")

// Active starts following the bucket until ctx ends.
func (s *Store) Active(ctx context.Context, log *slog.Logger) *Active {
	a := &Active{store: s, log: log, jobs: map[string]Brief{}, ready: make(chan struct{})}
	go a.run(ctx)
	return a
}

// Ready is closed once the first replay of the bucket is complete.
func (a *Active) Ready() <-chan struct{} { return a.ready }

// Snapshot copies the briefs of the non-terminal records.
func (a *Active) Snapshot() map[string]Brief {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make(map[string]Brief, len(a.jobs))
	for k, v := range a.jobs {
		out[k] = v
	}
	return out
}

// Count counts the non-terminal records for which match is true, without
// copying the map (admission asks once per submission).
func (a *Active) Count(match func(Brief) bool) int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	n := 0
	for _, b := range a.jobs {
		if match(b) {
			n++
		}
	}
	return n
}

// Get returns the brief of one non-terminal record.
func (a *Active) Get(id string) (Brief, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	b, ok := a.jobs[id]
	return b, ok
}

func (a *Active) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := a.follow(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("job records watch ended, following again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// follow replays the bucket into a fresh map, swaps it in when the replay
// is complete, then applies updates until the watch ends.
func (a *Active) follow(ctx context.Context) error {
	w, err := a.store.kv.WatchAll(ctx)
	if err != nil {
		return errors.Wrap(err, "watch job records")
	}
	defer func() { _ = w.Stop() }()
	replay := map[string]Brief{}
	live := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errWatchEnded
			}
			if e == nil {
				a.mu.Lock()
				a.jobs, replay, live = replay, nil, true
				a.mu.Unlock()
				a.readyOnce.Do(func() { close(a.ready) })
				continue
			}
			if !live {
				apply(replay, e, a.log)
				continue
			}
			a.mu.Lock()
			apply(a.jobs, e, a.log)
			a.mu.Unlock()
		}
	}
}

func apply(m map[string]Brief, e jetstream.KeyValueEntry, log *slog.Logger) {
	if e.Operation() != jetstream.KeyValuePut {
		delete(m, e.Key())
		return
	}
	var b Brief
	if err := codec.Decode(e.Value(), &b); err != nil {
		log.Warn("undecodable job record", "job", e.Key(), "err", err)
		delete(m, e.Key())
		return
	}
	if b.State.Terminal() {
		delete(m, e.Key())
		return
	}
	m[e.Key()] = b
}
