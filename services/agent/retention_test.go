package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func TestExpiredPicksIdleAttemptsOfJobsNotRunningHere(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	dirs := []attemptDir{
		{job: "old", attempt: "1", last: now.Add(-9 * day)},
		{job: "old", attempt: "2", last: now.Add(-8 * day)},
		{job: "fresh", attempt: "1", last: now.Add(-6 * day)},
		{job: "busy", attempt: "1", last: now.Add(-30 * day)}, // a later attempt runs here
		{job: "older", attempt: "1", last: now.Add(-20 * day)},
	}
	busy := func(job string) bool { return job == "busy" }
	got := expired(dirs, busy, now, 7*day, 10)
	want := []string{"older/1", "old/1", "old/2"} // oldest first
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i, d := range got {
		if d.job+"/"+d.attempt != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	// Bounded: one sweep removes at most limit, the oldest.
	if got := expired(dirs, busy, now, 7*day, 1); len(got) != 1 || got[0].job != "older" {
		t.Fatalf("limit 1: got %v", got)
	}
}

func TestSweepIntervalIsATenthOfRetentionAtMostHourly(t *testing.T) {
	for ret, want := range map[time.Duration]time.Duration{
		DefaultRetention: time.Hour, 10 * time.Minute: time.Minute, time.Second: time.Second,
	} {
		if got := sweepInterval(ret); got != want {
			t.Errorf("sweepInterval(%s) = %s, want %s", ret, got, want)
		}
	}
}

// The sweep removes, on disk, the attempt directories idle past the
// retention age (and a job directory left empty), and keeps the recent
// ones and those of a job with ranks running here.
func TestSweepRemovesExpiredAttemptDirectories(t *testing.T) {
	data := t.TempDir()
	e := newExecutor(Config{DataDir: data, Retention: time.Minute}, nil, nil, slog.New(slog.DiscardHandler), nil)
	now := time.Now()
	mk := func(job, attempt string, age time.Duration) string {
		dir := filepath.Join(data, "jobs", job, attempt)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(dir, "rank-0.log")
		if err := os.WriteFile(log, []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{log, dir} {
			if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	gone := mk("done", "1", 2*time.Minute)
	kept := mk("recent", "1", 30*time.Second)
	running := mk("busy", "1", time.Hour)
	// A log still written to keeps its attempt: the newest file counts.
	stillLogging := mk("logging", "1", time.Hour)
	if err := os.Chtimes(filepath.Join(stillLogging, "rank-0.log"), now, now); err != nil {
		t.Fatal(err)
	}
	e.gangs["busy"] = &localGang{}

	if n := e.sweepAttempts(context.Background(), now); n != 1 {
		t.Fatalf("removed %d directories, want 1", n)
	}
	if _, err := os.Stat(filepath.Dir(gone)); !os.IsNotExist(err) {
		t.Fatalf("expired attempt's job directory still there (%v)", err)
	}
	for _, dir := range []string{kept, running, stillLogging} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s removed: %v", dir, err)
		}
	}
	// Moved aside, then removed: nothing is left there either.
	if left, err := os.ReadDir(filepath.Join(e.cfg.DataDir, "removing")); err != nil || len(left) != 0 {
		t.Errorf("left aside: %v (%v)", left, err)
	}
	// Once the job's ranks are gone here, its old attempt goes too.
	delete(e.gangs, "busy")
	if n := e.sweepAttempts(context.Background(), now); n != 1 {
		t.Fatalf("removed %d directories, want 1", n)
	}
}

// The agent's loop sweeps from the start, not only after an interval: an
// agent restarted after a long stop catches up at once.
func TestKeepSweepingSweepsAtStart(t *testing.T) {
	data := t.TempDir()
	e := newExecutor(Config{DataDir: data, Retention: time.Hour}, nil, nil, slog.New(slog.DiscardHandler), nil)
	dir := filepath.Join(data, "jobs", "j", "1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.keepSweeping(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			return errors.Newf("%s still there (%v)", dir, err)
		}
		return nil
	})
}
