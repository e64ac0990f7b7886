package devcluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the developer's own config file and LOCKSTEP_* variables
// out of the lockstep binaries these tests run (sbatch, checkpoint): their
// current context's creds would go with --nats to the test's cluster.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lockstep-devcluster-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, k := range []string{"LOCKSTEP_NATS", "NATS_URL", "LOCKSTEP_CREDS", "NATS_CREDS", "LOCKSTEP_CONTEXT"} {
		os.Unsetenv(k)
	}
	os.Setenv("LOCKSTEP_CONFIG", filepath.Join(dir, "absent.yaml"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
