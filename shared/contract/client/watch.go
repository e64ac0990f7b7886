package client

import (
	"context"
	"log/slog"
	"sort"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// WatchUntilEnded is WaitEnded that hands seen each version of the record
// before the final one (see jobs.Store.WatchUntilEnded).
func (c *Client) WatchUntilEnded(ctx context.Context, id string, seen func(domain.Job)) (domain.Job, error) {
	s, err := c.store(ctx)
	if err != nil {
		return domain.Job{}, err
	}
	return s.WatchUntilEnded(ctx, id, seen)
}

// JobsWatch follows every job record (one watch of the jobs KV, replayed
// and restarted as jobs.Store.Follow does) and says when they change: the
// CLI's `queue -w` redraws on that, never by polling.
type JobsWatch struct {
	mu sync.Mutex
	// records are the decoded records by key; a nil one did not decode
	// (or named another job).
	records map[string]*domain.Job
	current bool
	changed chan struct{}
}

// WatchJobs starts following the job records until ctx ends.
func (c *Client) WatchJobs(ctx context.Context) (*JobsWatch, error) {
	s, err := c.store(ctx)
	if err != nil {
		return nil, err
	}
	w := &JobsWatch{records: map[string]*domain.Job{}, changed: make(chan struct{}, 1)}
	go s.Follow(ctx, slog.New(slog.DiscardHandler), w)
	return w, nil
}

// Changed has a value once the records were first read, and again after
// each change since the last receive (changes coalesce).
func (w *JobsWatch) Changed() <-chan struct{} { return w.changed }

// Snapshot returns the records as last read, by ID, as Jobs does: a record
// that does not decode or names another job is in bad.
func (w *JobsWatch) Snapshot() (all []domain.Job, bad []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, j := range w.records {
		if j == nil {
			bad = append(bad, key)
			continue
		}
		all = append(all, *j)
	}
	sort.Strings(bad)
	return all, bad
}

// Replay starts a fresh copy: the watch (re)started.
func (w *JobsWatch) Replay() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.records, w.current = map[string]*domain.Job{}, false
}

// Apply takes one record or deletion.
func (w *JobsWatch) Apply(e jobs.Entry) {
	var rec *domain.Job
	if !e.Deleted {
		if j, err := jobs.Decode(e.Key, e.Value); err == nil {
			rec = &j
		}
	}
	w.mu.Lock()
	if e.Deleted {
		delete(w.records, e.Key)
	} else {
		w.records[e.Key] = rec
	}
	current := w.current
	w.mu.Unlock()
	if current {
		w.notify()
	}
}

// Current says the replay is complete.
func (w *JobsWatch) Current() {
	w.mu.Lock()
	w.current = true
	w.mu.Unlock()
	w.notify()
}

func (w *JobsWatch) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// NewRecords follows the job records written from now on (see
// jobs.Store.NewRecords): started before a submission, it delivers
// admission's verdict on it as soon as it is written.
func (c *Client) NewRecords(ctx context.Context) (<-chan domain.Job, error) {
	s, err := c.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.NewRecords(ctx)
}
