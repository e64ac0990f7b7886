package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// `lockstep ckpt-done` from inside a rank: no bus at all, only the agent's
// socket and the attempt's token from the rank's environment. The test
// plays the rank's ckpt-done with what the rank was given; the ack goes
// through the agent to drain, and the next attempt resumes from it. With
// another token it is refused and changes nothing.
func TestCkptDoneGoesThroughTheAgent(t *testing.T) {
	url := startDevCluster(t)
	ctx := context.Background()
	cl := dialTest(t, url)
	out := filepath.Join(t.TempDir(), "rank-env")
	script := fmt.Sprintf(`echo "$%s $%s" > %s.tmp && mv %s.tmp %s; trap 'true' USR1; while true; do sleep 0.1; done`,
		rankenv.AgentSocket, rankenv.AckToken, out, out, out)
	spec := writeFile(t, "job.yaml", fmt.Sprintf("name: acked\ngang: {nodes: 1, gpusPerNode: 1}\ncheckpoint: {gracePeriod: 60s}\ncommand: [sh, -c, %q]\n", script))
	o, e, code := cli(t, "submit", spec, "--nats", url)
	if code != 0 {
		t.Fatalf("submit: %s %s", o, e)
	}
	id := strings.TrimSpace(o)
	var sock, token string
	testenv.Eventually(t, 30*time.Second, func() error {
		b, err := os.ReadFile(out)
		if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
			sock, token = f[0], f[1]
			return nil
		}
		return fmt.Errorf("rank not started (%v)", err)
	})
	// The rank runs before the job record says so (gang records it once
	// every node reported started); a checkpoint asked before that would
	// be refused below.
	testenv.Eventually(t, 30*time.Second, func() error {
		if j, err := cl.Job(ctx, id); err != nil || j.State != domain.StateRunning {
			return fmt.Errorf("not running yet: %v", err)
		}
		return nil
	})
	// A job not running yet has nothing to checkpoint: it is named, not
	// asked, and the command fails.
	waiting := writeFile(t, "waiting.yaml", fmt.Sprintf("name: waiting\ngang: {nodes: 1, gpusPerNode: 1}\ndependencies: [{type: afterok, jobs: [%s]}]\ncommand: [\"true\"]\n", id))
	o, e, code = cli(t, "submit", waiting, "--nats", url)
	if code != 0 {
		t.Fatalf("submit: %s %s", o, e)
	}
	pending := strings.TrimSpace(o)
	if o, e, code := cli(t, "checkpoint", pending, "--nats", url); code != 1 || !strings.Contains(o, pending+" is pending, not running yet") {
		t.Errorf("checkpoint of a pending job: exit %d, %q %q; want exit 1 naming it pending", code, o, e)
	}
	if o, e, code := cli(t, "checkpoint", id, "--nats", url); code != 0 {
		t.Fatalf("checkpoint: %s %s", o, e)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if j, err := cl.Job(ctx, id); err != nil || j.Drain == nil {
			return fmt.Errorf("not draining yet: %v", err)
		}
		return nil
	})
	args := []string{"ckpt-done", "--socket", sock, "--job", id, "--attempt", "1", "--rank", "0", "--step", "12", "--path", "/ckpt/12"}

	t.Setenv(rankenv.AckToken, strings.Repeat("0", len(token)))
	if _, e, code := cli(t, args...); code == 0 || !strings.Contains(e, "with this token") {
		t.Errorf("ckpt-done with a forged token: exit %d %s", code, e)
	}
	t.Setenv(rankenv.AckToken, token)
	if o, e, code := cli(t, args...); code != 0 || !strings.Contains(o, "acknowledged") {
		t.Fatalf("ckpt-done: exit %d %s %s", code, o, e)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		j, err := cl.Job(ctx, id)
		if err != nil || j.Attempt < 2 || j.LastCheckpoint == nil {
			return fmt.Errorf("not requeued from the checkpoint yet: %v", err)
		}
		if j.LastCheckpoint.Step != 12 || j.LastCheckpoint.Path != "/ckpt/12" {
			return fmt.Errorf("resumes from %+v", *j.LastCheckpoint)
		}
		return nil
	})
	_ = cl.Cancel(ctx, id, "test over")
	_ = cl.Cancel(ctx, pending, "test over")
}
