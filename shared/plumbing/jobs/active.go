package jobs

import (
	"context"
	"log/slog"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Active follows the bucket (Follow) and keeps the brief of every record
// that is not terminal; with WithPending, also the whole record of every
// pending job with its revision, so that a proposal made on a record the
// caller already holds costs no KV read. It costs a brief decode per
// record update (and a full one while the job is pending), whatever the
// bucket's history holds: the bucket keeps finished jobs, and listing all
// of them on every reconciler pass grew with every job ever run.
//
// Like any watch it lags the bucket a little: confirm with Get before
// acting on an absence or on a state that makes you destroy something.
type Active struct {
	log         *slog.Logger
	keepPending bool

	mu      sync.RWMutex
	briefs  map[string]domain.JobBrief
	pending map[string]heldJob
	ready   chan struct{}

	// The replay in progress, swapped in when complete; touched by the
	// follower's goroutine alone.
	next     activeMaps
	replayed bool
}

type heldJob struct {
	job domain.Job
	rev uint64
}

type activeMaps struct {
	briefs  map[string]domain.JobBrief
	pending map[string]heldJob
}

// ActiveOption configures Active.
type ActiveOption func(*Active)

// WithPending keeps the whole record of every pending job too (Pending).
func WithPending() ActiveOption { return func(a *Active) { a.keepPending = true } }

// Active starts following the bucket until ctx ends.
func (s *Store) Active(ctx context.Context, log *slog.Logger, opts ...ActiveOption) *Active {
	a := &Active{log: log, briefs: map[string]domain.JobBrief{}, pending: map[string]heldJob{}, ready: make(chan struct{})}
	for _, o := range opts {
		o(a)
	}
	s.own.follow() // before any write the caller makes next
	go s.followWith(ctx, log, (*activeSink)(a), true)
	return a
}

// Ready is closed once the first replay of the bucket is complete.
func (a *Active) Ready() <-chan struct{} { return a.ready }

// Snapshot copies the briefs of the non-terminal records.
func (a *Active) Snapshot() map[string]domain.JobBrief {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make(map[string]domain.JobBrief, len(a.briefs))
	for k, v := range a.briefs {
		out[k] = v
	}
	return out
}

// Count counts the non-terminal records for which match is true, without
// copying the map (admission asks once per submission).
func (a *Active) Count(match func(domain.JobBrief) bool) int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	n := 0
	for _, b := range a.briefs {
		if match(b) {
			n++
		}
	}
	return n
}

// Get returns the brief of one non-terminal record.
func (a *Active) Get(id string) (domain.JobBrief, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	b, ok := a.briefs[id]
	return b, ok
}

// Pending returns the record of a pending job as last seen, with its
// revision; never found without WithPending.
func (a *Active) Pending(id string) (domain.Job, uint64, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	h, ok := a.pending[id]
	return h.job, h.rev, ok
}

// activeSink is Active as Follow feeds it: a replay goes into fresh maps,
// swapped in when complete, so that a restarted watch never shows a
// half-replayed bucket; live changes go straight into the current ones.
type activeSink Active

func (a *activeSink) Replay() {
	a.next = activeMaps{briefs: map[string]domain.JobBrief{}, pending: map[string]heldJob{}}
	a.replayed = false
}

func (a *activeSink) Apply(e Entry) {
	if !a.replayed {
		a.apply(a.next, e)
		return
	}
	a.mu.Lock()
	a.apply(activeMaps{briefs: a.briefs, pending: a.pending}, e)
	a.mu.Unlock()
}

func (a *activeSink) Current() {
	a.mu.Lock()
	a.briefs, a.pending = a.next.briefs, a.next.pending
	a.mu.Unlock()
	a.next, a.replayed = activeMaps{}, true
	select {
	case <-a.ready:
	default:
		close(a.ready)
	}
}

func (a *activeSink) apply(m activeMaps, e Entry) {
	delete(m.pending, e.Key)
	if e.Deleted {
		delete(m.briefs, e.Key)
		return
	}
	var b domain.JobBrief
	if e.Own != nil {
		b = *e.Own // written by this Store: what the value decodes to
	} else if err := DecodeInto(e.Key, e.Value, &b, &b.ID); err != nil {
		a.log.Warn("job record skipped", "job", e.Key, "err", err)
		delete(m.briefs, e.Key)
		return
	}
	if b.State.Terminal() {
		delete(m.briefs, e.Key)
		return
	}
	m.briefs[e.Key] = b
	if !a.keepPending || b.State != domain.StatePending {
		return
	}
	j, err := decode(e.Key, e.Value)
	if err != nil {
		a.log.Warn("job record skipped", "job", e.Key, "err", err)
		return
	}
	m.pending[e.Key] = heldJob{job: j, rev: e.Revision}
}
