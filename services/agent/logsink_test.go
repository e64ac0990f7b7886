package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A rank's log file, written by the agent outside the owner's quota,
// stops at its bound with a note saying where the rest is. The bound is
// the file's: stdout and stderr append to the same one.
func TestRankLogFileStopsAtItsBound(t *testing.T) {
	env := testenv.Start(t)
	e, _ := testExecutor(t, env, ContainProcess)
	path := filepath.Join(t.TempDir(), "rank-0.log")
	stdout, stderr := e.newSinks(domain.Assignment{JobID: "loud", Owner: "alice", Attempt: 1}, 0, path)
	stdout.log.limit = 16
	for i, line := range []string{"first line\n", "second\n", "third\n"} {
		// The second and third lines on stderr: each fits a bound of its
		// own, but not what the first left of the file's.
		sink := map[bool]*logSink{true: stdout, false: stderr}[i == 0]
		if _, err := sink.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	for _, sink := range []*logSink{stdout, stderr} {
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(raw)
	if !strings.HasPrefix(got, "first line\n") || strings.Contains(got, "second") || strings.Contains(got, "third") ||
		!strings.Contains(got, "this log file stops here") {
		t.Errorf("log file:\n%s", got)
	}
}
