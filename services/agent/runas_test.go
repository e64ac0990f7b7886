package agent

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// rankOutput starts as and waits for its rank 0 to print a line "end",
// and returns what it printed (from the rank's log file).
func rankOutput(t *testing.T, e *executor, as domain.Assignment) string {
	t.Helper()
	if err := e.start(context.Background(), as, 0); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(e.cfg.DataDir, "jobs", as.JobID, "1", "rank-0.log")
	var out string
	testenv.Eventually(t, 10*time.Second, func() error {
		b, _ := os.ReadFile(log)
		if out = string(b); !strings.Contains(out, "\nend\n") {
			return fmt.Errorf("rank output so far: %q", out)
		}
		return nil
	})
	return out
}

// envOf parses `env` output into a map.
func envOf(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// The finding: the rank environment was the agent's own, so anything the
// agent was started with (credentials in its NATS URL, secrets) reached
// every rank. Now it is built from an allow-list: a variable set in the
// agent's environment is absent, the NATS URL has no credentials, and the
// ranks get PATH/HOME/USER/LOGNAME/SHELL, the spec's env and Lockstep's.
func TestRankEnvironmentIsAllowListed(t *testing.T) {
	env := testenv.Start(t)
	t.Setenv("LOCKSTEP_TEST_AGENT_SECRET", "hunter2")
	e, _ := testExecutor(t, env, ContainProcess)
	e.natsURL = publicNATS("nats://agent:hunter2@127.0.0.1:4222,tls://tok3n@10.0.0.2:4222")
	as := shAssignment("envjob", "env; echo end")
	as.Env = map[string]string{"EPOCHS": "3"}
	got := envOf(rankOutput(t, e, as))

	for k, v := range got {
		if strings.Contains(v, "hunter2") || strings.Contains(v, "tok3n") || k == "LOCKSTEP_TEST_AGENT_SECRET" {
			t.Errorf("rank inherited %s=%s", k, v)
		}
	}
	want := map[string]string{"EPOCHS": "3", "RANK": "0", "LOCKSTEP_JOB_ID": "envjob", "USER": e.self.Name,
		"LOCKSTEP_NATS": "nats://127.0.0.1:4222,tls://10.0.0.2:4222", rankenv.AgentSocket: "", rankenv.AckToken: ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"PATH", "HOME", "LOGNAME", "SHELL", "LOCKSTEP_CHECKPOINT_ACK"} {
		if got[k] == "" {
			t.Errorf("%s missing from the rank's environment", k)
		}
	}
}

// Run as the owner: an agent running as root starts a job's ranks with its
// owner's uid, gid and groups, hands them the attempt's directory, and
// fails a job whose owner has no account here (or maps it to the account
// it is told to). This machine's "nobody" is the owner.
func TestRankRunsAsItsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root starts ranks as other users")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no nobody account: %v", err)
	}
	env := testenv.Start(t)
	e, _ := testExecutor(t, env, ContainProcess)
	// The rank, as nobody, must be able to reach its directory under the
	// data dir, as on a real node (t.TempDir is closed to others).
	e.cfg.DataDir = openTempDir(t)

	as := shAssignment("mine", "id -u; id -g; id -G; echo $USER $HOME; touch ./written && echo wrote; echo end")
	as.Owner = "nobody"
	out := rankOutput(t, e, as)
	lines := strings.Split(out, "\n")
	if len(lines) < 5 || lines[0] != nobody.Uid || lines[1] != nobody.Gid {
		t.Fatalf("rank ran as %q, want uid %s gid %s", out, nobody.Uid, nobody.Gid)
	}
	if groups := strings.Fields(lines[2]); len(groups) != 1 || groups[0] != nobody.Gid {
		t.Errorf("rank's groups = %v, want only nobody's (%s): none of the agent's", groups, nobody.Gid)
	}
	if lines[3] != "nobody "+nobody.HomeDir || lines[4] != "wrote" {
		t.Errorf("rank's user, home and attempt directory: %q", out)
	}

	// An owner unknown here fails the job on this node, naming both.
	e.cfg.Node.Name = "node-3"
	as = shAssignment("bobs", "echo end")
	as.Owner = "lockstep-no-such-user"
	if err := e.start(context.Background(), as, 0); err == nil || err.Error() != `user "lockstep-no-such-user" does not exist on node-3` {
		t.Errorf("unknown owner: %v", err)
	}
	// ... unless unknown users map to an account.
	e.cfg.MapUnknownUsersTo = "nobody"
	as = shAssignment("mapped", "id -u; echo end")
	as.Owner = "lockstep-no-such-user"
	if out := rankOutput(t, e, as); !strings.HasPrefix(out, nobody.Uid+"\n") {
		t.Errorf("mapped owner ran as %q, want uid %s", out, nobody.Uid)
	}
	// With auth on, a job without an owner (an admin's) is mapped as an
	// unknown owner is, and is not root's by default.
	e.cfg.Creds = "/auth-on.creds"
	as = shAssignment("ownerless", "id -u; echo end")
	if out := rankOutput(t, e, as); !strings.HasPrefix(out, nobody.Uid+"\n") {
		t.Errorf("an owner-less job with auth on ran as %q, want the mapped uid %s", out, nobody.Uid)
	}
	e.cfg.MapUnknownUsersTo = ""
	as = shAssignment("ownerless-2", "echo end")
	if err := e.start(context.Background(), as, 0); err == nil || !strings.Contains(err.Error(), "has no owner") || !strings.Contains(err.Error(), "--allow-root-ranks") {
		t.Errorf("an owner-less job with auth on and no mapping: %v", err)
	}
	e.cfg.Creds = ""
	// Root only where allowed.
	as = shAssignment("rooted", "echo end")
	as.Owner = "root"
	if err := e.start(context.Background(), as, 0); err == nil || !strings.Contains(err.Error(), "--allow-root-ranks") {
		t.Errorf("root owner: %v", err)
	}
}

// openTempDir is a temporary directory other users may enter.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lockstep-runas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An attempt's directory left by an earlier job of the same ID (IDs are
// reused once a record is gone) is not taken over: its files would be the
// new job's.
func TestAttemptDirIsMadeAfresh(t *testing.T) {
	e := &executor{cfg: Config{DataDir: t.TempDir()}}
	as := domain.Assignment{JobID: "reused", Attempt: 1}
	dir, err := e.attemptDir(as, account{})
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "checkpoint-ack-rank-0")
	if err := os.WriteFile(planted, []byte("resume from mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := e.attemptDir(as, account{})
	if err != nil {
		t.Fatal(err)
	}
	if again != dir {
		t.Fatalf("directory %s, then %s", dir, again)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the directory holds %v (%v), want nothing of the earlier job", entries, err)
	}
}
