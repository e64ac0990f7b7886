package placement

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// Retention bounds, see Config.Retention.
const (
	// retentionMarkerAge is how long the delete marker of a removed record
	// stays: watchers behind by less than that see the removal.
	retentionMarkerAge = time.Hour
	// retentionBatch bounds the records one sweep removes, so a first
	// sweep over a long history does not hold up the leader's other work.
	retentionBatch = 5000
	// retentionMaxInterval caps the time between sweeps.
	retentionMaxInterval = 10 * time.Minute
)

// startRetention sweeps finished job records older than cfg.Retention out
// of the jobs KV, now and then periodically, until ctx (the leader's term)
// ends. Only the leader sweeps: one sweeper at a time, and every delete is
// conditional on the record's revision, so a record that changed (or a
// deposed leader's late sweep) loses nothing. The returned func stops the
// sweeper and waits for it.
func startRetention(ctx context.Context, js *jobs.Store, cfg Config, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	p := jobs.RetentionPolicy{Age: cfg.Retention, MarkerAge: min(retentionMarkerAge, cfg.Retention), Limit: retentionBatch}
	every := min(max(cfg.Retention/4, time.Second), retentionMaxInterval)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sweep := func() {
			res, err := js.Sweep(ctx, cfg.Now(), p)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Warn("job record retention sweep failed; next sweep retries", "err", err)
			case res.Deleted+res.Purged > 0:
				log.Info("removed finished job records past retention", "records", res.Deleted,
					"changedMeanwhile", res.Changed, "markers", res.Purged, "retention", cfg.Retention)
			}
		}
		sweep()
		clock.Every(ctx, every, sweep)
	}()
	return func() { cancel(); wg.Wait() }
}
