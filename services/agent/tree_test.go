package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/procfs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Helpers shared by the containment tests: a rank that forks sleep
// grandchildren in each way a process leaves its parent's reach, and
// checks on those processes by PID and start time (never the PID alone).

// treeScript is a rank's shell script: it records its own PID and those of
// three `sleep` grandchildren — one in the background, one that calls
// setsid (a new session and process group), one double-forked (orphaned
// at once) — in pidFile, then waits for them (forever) or, with exit,
// exits 0 once the test creates pidFile.go.
func treeScript(pidFile string, exit bool) string {
	end := "wait"
	if exit {
		end = fmt.Sprintf(`while [ ! -e %s.go ]; do sleep 0.02; done; exit 0`, pidFile)
	}
	child := fmt.Sprintf(`sh -c 'echo $$ >> %s; exec sleep 777'`, pidFile)
	return fmt.Sprintf("echo $$ >> %s\n%s &\nsetsid %s &\n( %s & )\n%s\n", pidFile, child, child, child, end)
}

// rankTree waits for the four PIDs of treeScript and returns them with
// their start times. Whatever is left of them when the test ends is
// killed, so a failing test leaves no sleep behind.
func rankTree(t *testing.T, pidFile string) map[int]uint64 {
	t.Helper()
	procs := map[int]uint64{}
	testenv.Eventually(t, 10*time.Second, func() error {
		b, _ := os.ReadFile(pidFile)
		lines := strings.Fields(string(b))
		if len(lines) < 4 {
			return fmt.Errorf("%d of 4 processes started", len(lines))
		}
		for _, l := range lines {
			pid, err := strconv.Atoi(l)
			if err != nil {
				return err
			}
			p, ok := procfs.Stat(pid)
			if !ok {
				return fmt.Errorf("process %d gone before it was seen", pid)
			}
			procs[pid] = p.Start
		}
		return nil
	})
	t.Cleanup(func() {
		for pid := range running(procs) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return procs
}

// running returns those of procs that still run (zombies do not).
func running(procs map[int]uint64) map[int]string {
	out := map[int]string{}
	for pid, start := range procs {
		if p, ok := procfs.Stat(pid); ok && p.Start == start && p.State != 'Z' {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			out[pid] = strings.ReplaceAll(string(b), "\x00", " ")
		}
	}
	return out
}

// noneRunning is a testenv.Eventually condition.
func noneRunning(procs map[int]uint64) func() error {
	return func() error {
		if r := running(procs); len(r) > 0 {
			return fmt.Errorf("still running: %v", r)
		}
		return nil
	}
}

// modes are the containment modes this machine supports.
func modes(t *testing.T) []Containment {
	out := []Containment{ContainProcess}
	dir := t.TempDir()
	if parent, err := cgroupParent(dir); err == nil {
		_ = os.Remove(parent)
		out = append(out, ContainCgroup)
	} else {
		t.Logf("cgroup mode not tested here: %v", err)
	}
	return out
}

func pidFileIn(t *testing.T) string { return filepath.Join(t.TempDir(), "pids") }
