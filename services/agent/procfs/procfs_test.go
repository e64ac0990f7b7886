package procfs

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestStatDescendantsAndEnv(t *testing.T) {
	self, ok := Stat(os.Getpid())
	if !ok || self.PPID != os.Getppid() || self.Start == 0 {
		t.Fatalf("Stat(self) = %+v, %v; parent is %d", self, ok, os.Getppid())
	}
	// A shell whose child sleeps: both are below this process.
	sh := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	sh.Env = []string{"PROCFS_TEST=token-1"}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sh.Process.Kill(); _ = sh.Wait() })
	var below []int
	for range 100 {
		if below = Descendants(os.Getpid()); len(below) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Contains(below, sh.Process.Pid) || len(below) < 2 {
		t.Fatalf("Descendants = %v, want the shell %d and its sleep", below, sh.Process.Pid)
	}
	if v := EnvValue(sh.Process.Pid, "PROCFS_TEST"); v != "token-1" {
		t.Errorf("EnvValue = %q", v)
	}
	if v := EnvValue(sh.Process.Pid, "PROCFS"); v != "" {
		t.Errorf("a prefix of a name matched: %q", v)
	}
	if _, ok := Stat(-1); ok {
		t.Error("Stat of no process succeeded")
	}
}
