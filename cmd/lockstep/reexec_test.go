//go:build !lockstep_client

package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/reexec"
)

// Every rank runs under a supervisor that is this binary executed again
// (package reexec). Its hook must take over before the packages that have
// nothing to do with it initialise: behind etcd's server, the JSON Schema
// compiler, Prometheus and cockroachdb/errors, a supervisor cost 42 ms of
// CPU and 7.3 MB of its own memory (15 ms and 2.1 MB without them).
// GODEBUG=inittrace=1 prints a line as each package's init ends; the
// supervisor exits inside its hook, so the packages after it never print.
// net and regexp stand for any import that would hold the hook back:
// package net alone (a net.Dial in the lifeline) cost 66 more inits.
func TestSupervisorSkipsTheServersInits(t *testing.T) {
	heavy := []string{
		"github.com/santhosh-tekuri/jsonschema/v6",
		"go.etcd.io/etcd/server/v3/etcdserver",
		"go.etcd.io/etcd/server/v3/storage/mvcc",
		"github.com/prometheus/client_golang/prometheus",
		"github.com/cockroachdb/errors",
		"net",
		"regexp",
		"google.golang.org/protobuf/internal/filedesc",
		"encoding/gob",
		// Importing path/filepath or os/exec would put the hook behind
		// path/filepath; strings or bufio, behind encoding/gob.
		"path/filepath",
	}
	// Both runs pass -test.run=^$ first: should the hook not take over,
	// the test binary runs no test (not this one again), and exits 0.
	inits := func(argv0 string, wantExit int) string {
		t.Helper()
		cmd := exec.Command("/proc/self/exe", "-test.run=^$", "/bin/true")
		cmd.Args[0] = argv0
		cmd.Env = []string{"GODEBUG=inittrace=1"}
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "init runtime @") {
			t.Fatalf("%s: no init trace:\n%s", argv0, out)
		}
		if code := cmd.ProcessState.ExitCode(); code != wantExit {
			t.Fatalf("%s: exit %d, want %d:\n%s", argv0, code, wantExit, out)
		}
		return string(out)
	}
	// The binary as any other command runs it: every init.
	all := inits("lockstep", 0)
	// The supervisor without its pipes: it exits 127 in its hook.
	sup := inits(reexec.SupervisorArg0, 127)
	if !strings.Contains(sup, "started without its pipes") {
		t.Errorf("the supervisor did not say why it refused:\n%s", sup)
	}
	for _, pkg := range heavy {
		if !strings.Contains(all, "init "+pkg+" @") {
			t.Errorf("%s does not initialise in this binary: the check proves nothing for it", pkg)
		}
		if strings.Contains(sup, "init "+pkg+" @") {
			t.Errorf("the rank supervisor initialised %s before its hook", pkg)
		}
	}
	t.Logf("packages initialised: %d as a command, %d as a supervisor",
		strings.Count(all, "\ninit "), strings.Count(sup, "\ninit "))
}

// BenchmarkSupervisorStart: a rank supervisor's whole life around
// /bin/true (this binary executed as one, its answer that the rank
// started, its end), and its CPU, the rank's included.
func BenchmarkSupervisorStart(b *testing.B) {
	var cpu time.Duration
	for b.Loop() {
		lifeR, lifeW, err1 := os.Pipe()
		statR, statW, err2 := os.Pipe()
		envR, envW, err3 := os.Pipe()
		if err := errors.Join(err1, err2, err3); err != nil {
			b.Fatal(err)
		}
		sup := &exec.Cmd{Path: "/proc/self/exe", Args: []string{reexec.SupervisorArg0, "-", "/bin/true", "true"},
			Env: []string{}, ExtraFiles: []*os.File{lifeR, statW, envR}}
		if err := sup.Start(); err != nil {
			b.Fatal(err)
		}
		_, _, _ = lifeR.Close(), statW.Close(), envR.Close()
		_, _ = envW.Write(reexec.EncodeRankEnv([]string{"A=1"}))
		_ = envW.Close()
		if _, err := reexec.ReadStatus(statR); err != nil {
			b.Fatal(err)
		}
		// The agent cuts the lifeline once the supervisor has exited: a
		// rank that ends by itself ends its supervisor first.
		_ = statR.Close()
		_ = sup.Wait()
		_ = lifeW.Close()
		cpu += sup.ProcessState.UserTime() + sup.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
