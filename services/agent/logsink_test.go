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
// stops at its bound with a note saying where the rest is.
func TestRankLogFileStopsAtItsBound(t *testing.T) {
	env := testenv.Start(t)
	e, _ := testExecutor(t, env, ContainProcess)
	path := filepath.Join(t.TempDir(), "rank-0.log")
	sink := e.newSink(domain.Assignment{JobID: "loud", Owner: "alice", Attempt: 1}, 0, "stdout", path)
	sink.limit = 16
	for _, line := range []string{"first line\n", "second line, past the bound\n", "third\n"} {
		if _, err := sink.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
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
