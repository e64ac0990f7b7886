package devcluster_test

import (
	"os"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// TestMain keeps the developer's own config file and LOCKSTEP_* variables
// out of the lockstep binaries these tests run (sbatch, checkpoint).
func TestMain(m *testing.M) { os.Exit(testenv.RunWithoutUserConfig(m)) }
