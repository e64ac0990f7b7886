package agent

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// Attempt directories (DataDir/jobs/JOB/ATTEMPT: rank logs, checkpoint ack
// files, the ranks' default working directory) are kept for Retention
// after the job's ranks ended here, then removed by a periodic sweep.

// sweepLimit bounds one sweep's removals: a node with a large backlog
// catches up over several sweeps instead of stalling in one.
const sweepLimit = 1000

// attemptDir is one attempt's directory as the sweep sees it.
type attemptDir struct {
	job, attempt string
	// last is the latest modification of the directory or a file in it:
	// rank logs are written until the ranks end, so this is when they did
	// (or later).
	last time.Time
}

// expired picks the attempt directories to remove: those of jobs with no
// ranks running here, untouched for longer than retention; the oldest
// first, at most limit. It is the sweep's decision, free of I/O.
func expired(dirs []attemptDir, running func(job string) bool, now time.Time, retention time.Duration, limit int) []attemptDir {
	var out []attemptDir
	for _, d := range dirs {
		if now.Sub(d.last) > retention && !running(d.job) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].last.Before(out[j].last) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// sweepInterval is how often the sweep runs: often enough that a directory
// outlives its retention by at most a tenth of it, at most hourly.
func sweepInterval(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Second), time.Hour)
}

// keepSweeping removes expired attempt directories until ctx ends.
func (e *executor) keepSweeping(ctx context.Context) {
	for ctx.Err() == nil {
		e.sweepAttempts(ctx, time.Now())
		clock.Sleep(ctx, sweepInterval(e.cfg.Retention))
	}
}

// sweepAttempts removes the attempt directories expired at now and
// returns how many it removed.
//
// A directory is moved aside under the lock that starts take, and removed
// after: a job's owner can fill theirs with millions of files, and
// removing those under the lock would hold every start on the node.
func (e *executor) sweepAttempts(ctx context.Context, now time.Time) int {
	root := filepath.Join(e.cfg.DataDir, "jobs")
	// What a removal cut short (an agent stopped meanwhile) left aside.
	left, _ := os.ReadDir(e.asideDir())
	for _, l := range left {
		_ = os.RemoveAll(filepath.Join(e.asideDir(), l.Name()))
	}
	victims := expired(listAttempts(ctx, root), e.running, now, e.cfg.Retention, sweepLimit)
	removed := 0
	for _, d := range victims {
		if ctx.Err() != nil {
			break
		}
		e.dirMu.Lock()
		// Checked again under the lock start takes to create a directory: a
		// new attempt of the job may have started since the listing.
		if e.running(d.job) {
			e.dirMu.Unlock()
			continue
		}
		gone, err := e.moveAside(filepath.Join(root, d.job, d.attempt))
		_ = os.Remove(filepath.Join(root, d.job)) // only if it is empty now
		e.dirMu.Unlock()
		if err == nil {
			err = os.RemoveAll(gone)
		}
		if err != nil {
			e.log.Warn("attempt directory not removed", "job", d.job, "attempt", d.attempt, "err", err)
			continue
		}
		removed++
		e.log.Info("attempt directory removed", "job", d.job, "attempt", d.attempt,
			"idle", now.Sub(d.last).Round(time.Second).String(), "retention", e.cfg.Retention.String())
	}
	return removed
}

// asideDir holds directories moved aside to be removed (moveAside).
func (e *executor) asideDir() string { return filepath.Join(e.cfg.DataDir, "removing") }

// moveAside moves dir, under the lock held by whoever calls it, to a place
// of its own in asideDir, and returns that place, which the caller removes
// after letting go of the lock: an owner can fill a directory with millions
// of files, and removing them under the lock would hold every start on the
// node. Nothing removes asideDir itself, so a move never finds it gone.
func (e *executor) moveAside(dir string) (string, error) {
	if err := os.MkdirAll(e.asideDir(), 0o700); err != nil {
		return "", errors.Wrap(err, "make the directory to move attempts aside to")
	}
	place, err := os.MkdirTemp(e.asideDir(), "attempt-")
	if err != nil {
		return "", errors.Wrap(err, "make a place to move an attempt aside to")
	}
	if err := os.Rename(dir, filepath.Join(place, "dir")); err != nil {
		_ = os.Remove(place)
		return "", errors.Wrapf(err, "move %s aside", dir)
	}
	return place, nil
}

// running reports whether ranks of the job run here.
func (e *executor) running(job string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.gangs[job]
	return ok
}

// listAttempts reads DataDir/jobs/*/*. Entries that vanish meanwhile are
// skipped.
func listAttempts(ctx context.Context, root string) []attemptDir {
	jobs, _ := os.ReadDir(root)
	var out []attemptDir
	for _, j := range jobs {
		if !j.IsDir() || ctx.Err() != nil {
			continue
		}
		attempts, _ := os.ReadDir(filepath.Join(root, j.Name()))
		for _, a := range attempts {
			if !a.IsDir() {
				continue
			}
			if last, ok := lastChange(filepath.Join(root, j.Name(), a.Name())); ok {
				out = append(out, attemptDir{job: j.Name(), attempt: a.Name(), last: last})
			}
		}
	}
	return out
}

// lastChange is the latest modification time of dir and its entries,
// read a batch at a time: the owner decides how many there are.
func lastChange(dir string) (time.Time, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return time.Time{}, false
	}
	last := st.ModTime()
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			if info, err := e.Info(); err == nil && info.ModTime().After(last) {
				last = info.ModTime()
			}
		}
		if err != nil || len(ents) == 0 {
			return last, true
		}
	}
}
