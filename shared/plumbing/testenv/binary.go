package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var lockstepBinary struct {
	once      sync.Once
	path, out string
	err       error
}

// LockstepBinary builds cmd/lockstep once per test binary, static as
// released (CGO_ENABLED=0): a test that needs the real binary — the Slurm
// shims on a job's PATH, the lifeline and srun mounted into an image with
// no C library — gets its path.
func LockstepBinary(t testing.TB) string {
	t.Helper()
	b := &lockstepBinary
	b.once.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(self), "..", "..", "..")
		dir, err := os.MkdirTemp("", "lockstep-bin")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "lockstep")
		build := exec.Command("go", "build", "-o", b.path, "./cmd/lockstep")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		b.out, b.err = string(out), err
	})
	if b.err != nil {
		t.Fatalf("build lockstep: %v\n%s", b.err, b.out)
	}
	return b.path
}

// RunWithoutUserConfig runs a package's tests with the developer's own
// config file and LOCKSTEP_* connection variables out of the way: every
// lockstep command resolves its connection from them, so a current
// context's creds would otherwise go with --nats to a test's cluster. It
// is the body of a TestMain; it returns m.Run's code.
func RunWithoutUserConfig(m *testing.M) int {
	dir, err := os.MkdirTemp("", "lockstep-test-config")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, k := range []string{"LOCKSTEP_NATS", "NATS_URL", "LOCKSTEP_CREDS", "NATS_CREDS", "LOCKSTEP_CONTEXT",
		"LOCKSTEP_TLS_CA", "LOCKSTEP_TLS_CERT", "LOCKSTEP_TLS_KEY",
		"LOCKSTEP_ETCD", "LOCKSTEP_ETCD_CA", "LOCKSTEP_ETCD_CERT", "LOCKSTEP_ETCD_KEY"} {
		os.Unsetenv(k)
	}
	os.Setenv("LOCKSTEP_CONFIG", filepath.Join(dir, "absent.yaml"))
	return m.Run()
}
