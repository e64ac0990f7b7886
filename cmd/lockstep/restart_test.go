package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// buildBinary compiles lockstep, with the build tags given, for a test.
func buildBinary(t *testing.T, tags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lockstep")
	out, err := exec.Command("go", "build", "-tags", strings.Join(tags, ","), "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type devProc struct {
	cmd    *exec.Cmd
	stderr *testenv.LockedBuffer
	exited chan struct{} // closed once Wait returned
}

func startDev(t *testing.T, bin, dir, natsAddr, etcdAddr string) *devProc {
	t.Helper()
	cmd := exec.Command(bin, "dev", "--data-dir", dir, "--nats-listen", natsAddr, "--etcd-listen", etcdAddr,
		"--nodes", "2", "--leaves", "1", "--metrics-addr", "127.0.0.1:0", "--web-listen", "127.0.0.1:0", "--insecure")
	// dev writes its CLI context into the config file: this run's own.
	cmd.Env = append(os.Environ(), "LOCKSTEP_CONFIG="+filepath.Join(dir, "config.yaml"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The process writes these while the test reads them: locked.
	var stdout, stderr testenv.LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &devProc{cmd: cmd, stderr: &stderr, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill() })
	testenv.Eventually(t, 60*time.Second, func() error {
		if strings.Contains(stdout.String(), "is up") {
			return nil
		}
		select {
		case <-p.exited:
			t.Fatalf("dev exited before it was up: %s", stderr.String())
		default:
		}
		return fmt.Errorf("not up yet: %s", stderr.String())
	})
	return p
}

// kill is kill -9 of the whole process group.
func (p *devProc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// TestDevRestartLosesNoJob kills the whole dev system with SIGKILL while
// one job runs and two wait, restarts it on the same data dir, and checks
// that every job is still there: the running one requeued with a reason,
// the pending ones still pending, and that the rank processes died with it.
func TestDevRestartLosesNoJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	natsAddr, etcdAddr := freePort(t), freePort(t)
	dev := startDev(t, bin, dir, natsAddr, etcdAddr)

	ctx := context.Background()
	cl, err := client.Dial(ctx, "nats://"+natsAddr)
	if err != nil {
		t.Fatal(err)
	}
	marker := "lockstep-restart-" + filepath.Base(dir)
	spec := `{"gang":{"nodes":2,"gpusPerNode":8},"command":["sh","-c","sleep 300 # ` + marker + `"]}`
	var ids []string
	for range 3 {
		id, err := cl.Submit(ctx, []byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Admission handles submissions concurrently, so any of the three may
	// be the one that starts: the cluster fits one at a time.
	var first string
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, id := range ids {
			if j, err := cl.Job(ctx, id); err == nil && j.State == domain.StateRunning {
				first = id
				return nil
			}
		}
		return fmt.Errorf("none of %v is running", ids)
	})
	cl.Close()

	dev.kill()
	// Ranks never outlive their agent.
	testenv.Eventually(t, 10*time.Second, func() error {
		out, _ := exec.Command("pgrep", "-f", marker).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			return fmt.Errorf("rank processes survived: %s", out)
		}
		return nil
	})

	startDev(t, bin, dir, natsAddr, etcdAddr)
	cl, err = client.Dial(ctx, "nats://"+natsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	testenv.Eventually(t, 60*time.Second, func() error {
		j, err := cl.Job(ctx, first)
		if err != nil {
			return err
		}
		if j.Restarts != 1 || j.Attempt != 2 {
			return fmt.Errorf("job %s: attempt %d restarts %d state %s reason %q", first, j.Attempt, j.Restarts, j.State, j.Reason)
		}
		return nil
	})
	for _, id := range ids {
		j, err := cl.Job(ctx, id)
		if err != nil {
			t.Fatalf("job %s lost after restart: %v", id, err)
		}
		if j.State.Terminal() {
			t.Errorf("job %s ended (%s: %s); it should be pending or running", id, j.State, j.Reason)
		}
	}
	// The record changes before the event is published: wait for it.
	testenv.Eventually(t, 10*time.Second, func() error {
		evs, err := cl.Events(ctx, first)
		if err != nil {
			return err
		}
		var requeue string
		for _, ev := range evs {
			if ev.Type == "requeued" {
				requeue = ev.Reason
			}
		}
		if !strings.Contains(requeue, "lost") {
			return fmt.Errorf("requeued event reason %q should say the ranks were lost", requeue)
		}
		return nil
	})
	for _, id := range ids {
		if err := cl.Cancel(ctx, id, "test over"); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, id := range ids {
			if j, err := cl.Job(ctx, id); err != nil || j.State != domain.StateCancelled {
				return fmt.Errorf("job %s not cancelled: %v", id, err)
			}
		}
		return nil
	})
	_ = os.Remove(bin)
}
