package testenv

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// FailureLog returns a logger for the services under test that keeps what
// they log and prints the last lines only if the test fails, so a flaky
// failure on CI comes with the story of what the services did.
func FailureLog(t testing.TB) *slog.Logger {
	t.Helper()
	w := &LockedBuffer{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		lines := strings.Split(strings.TrimRight(w.String(), "\n"), "\n")
		const keep = 300
		if len(lines) > keep {
			t.Logf("service log: %d earlier lines omitted", len(lines)-keep)
			lines = lines[len(lines)-keep:]
		}
		t.Logf("service log:\n%s", strings.Join(lines, "\n"))
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// LockedBuffer is a bytes.Buffer safe to read while another goroutine
// writes it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
