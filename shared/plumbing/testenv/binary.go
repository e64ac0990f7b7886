package testenv

import (
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
