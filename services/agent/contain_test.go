package agent

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// testAgent is node n1's agent around a process-contained testExecutor,
// connected to env's NATS and etcd: what the message handlers under test
// (checkpoint acks, step launches) use of a started agent.
func testAgent(t *testing.T, env *testenv.Env) *agent {
	t.Helper()
	e, _ := testExecutor(t, env, ContainProcess)
	return &agent{Started: &config.Started{Log: slog.New(slog.DiscardHandler), Bus: env.Bus, Etcd: env.Etcd}, cfg: e.cfg, exec: e}
}

// testExecutor is an executor on a real bus whose reports are collected.
func testExecutor(t *testing.T, env *testenv.Env, mode Containment) (*executor, func() []domain.Report) {
	t.Helper()
	cfg := Config{Base: config.Base{NATSURL: env.NATSURL}, Node: domain.Node{Name: "n1"},
		DataDir: t.TempDir(), StopGrace: 5 * time.Second, Containment: mode, Retention: DefaultRetention}
	log := slog.New(slog.DiscardHandler)
	box, err := newContainer(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.close)
	var mu sync.Mutex
	var reports []domain.Report
	e := newExecutor(cfg, env.Bus, box, log, func(_ context.Context, r domain.Report) {
		mu.Lock()
		reports = append(reports, r)
		mu.Unlock()
	})
	t.Cleanup(func() { e.stopAll("test over") })
	return e, func() []domain.Report {
		mu.Lock()
		defer mu.Unlock()
		return append([]domain.Report(nil), reports...)
	}
}

func shAssignment(job, script string) domain.Assignment {
	return domain.Assignment{JobID: job, Attempt: 1, NNodes: 1, WorldSize: 1, MasterAddr: "127.0.0.1", MasterPort: 29500,
		Ranks: []domain.Rank{{Rank: 0, GPUs: []int{0}}}, Command: []string{"sh", "-c", script}}
}

func gangOf(t *testing.T, e *executor, job string) *localGang {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	g, ok := e.gangs[job]
	if !ok {
		t.Fatalf("job %s not running", job)
	}
	return g
}

// A rank's grandchildren — backgrounded, setsid'd, double-forked — end
// with it: when the rank exits by itself, and when the agent stops it
// (cancel, drain, release) or kills it (fencing).
func TestRankTreeEndsWithTheRank(t *testing.T) {
	env := testenv.Start(t)
	for _, mode := range modes(t) {
		for _, how := range []string{"rank exits", "stop", "fence"} {
			t.Run(string(mode)+"/"+how, func(t *testing.T) {
				e, reports := testExecutor(t, env, mode)
				pids := pidFileIn(t)
				if err := e.start(context.Background(), shAssignment("j1", treeScript(pids, how == "rank exits")), 0); err != nil {
					t.Fatal(err)
				}
				g := gangOf(t, e, "j1")
				procs := rankTree(t, pids)
				switch how {
				case "rank exits":
					if err := os.WriteFile(pids+".go", nil, 0o644); err != nil {
						t.Fatal(err)
					}
				case "stop":
					e.stop("j1", "cancelled")
				case "fence":
					e.fenceAll("lease lost")
				}
				select {
				case <-g.done:
				case <-time.After(10 * time.Second):
					t.Fatal("ranks did not end")
				}
				// Once the rank is reported ended, nothing of its tree runs:
				// no waiting here.
				if err := noneRunning(procs)(); err != nil {
					t.Fatal(err)
				}
				if how == "rank exits" {
					rs := reports()
					if len(rs) != 1 || rs[0].Kind != domain.ReportExited {
						t.Fatalf("reports = %+v, want one exited", rs)
					}
				}
				// The rank's record (and cgroup) are gone with it.
				if ents, _ := os.ReadDir(e.box.stateDir); len(ents) != 0 {
					t.Fatalf("rank records left: %v", ents)
				}
				if e.box.cgParent != "" {
					if ents, _ := filepath.Glob(filepath.Join(e.box.cgParent, "rank-*")); len(ents) != 0 {
						t.Fatalf("rank cgroups left: %v", ents)
					}
				}
			})
		}
	}
}

// A command the supervisor cannot execute fails the start, as it did
// before there was a supervisor: gang hears "failed to start", with why.
func TestRankThatCannotStartFailsTheStart(t *testing.T) {
	env := testenv.Start(t)
	e, _ := testExecutor(t, env, ContainProcess)
	err := e.start(context.Background(), domain.Assignment{JobID: "j2", Attempt: 1,
		Ranks: []domain.Rank{{Rank: 0}}, Command: []string{"/nonexistent/train"}}, 0)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("err = %v, want a start error naming the missing file", err)
	}
	if ents, _ := os.ReadDir(e.box.stateDir); len(ents) != 0 {
		t.Fatalf("rank records left: %v", ents)
	}
	if err := e.start(context.Background(), domain.Assignment{JobID: "j3", Attempt: 1,
		Ranks: []domain.Rank{{Rank: 0}}, Command: []string{"no-such-command-here"}}, 0); err == nil {
		t.Fatal("a command not on PATH started")
	}
}

// The supervisor passes the rank's exit status through.
func TestSupervisorKeepsTheExitCode(t *testing.T) {
	box, err := newContainer(Config{DataDir: t.TempDir(), Containment: ContainProcess}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for script, want := range map[string]int{"exit 0": 0, "exit 3": 3, "kill -TERM $$": 143} {
		p, _, err := box.start(exec.Command("sh", "-c", script), rankPin{})
		if err != nil {
			t.Fatal(err)
		}
		err = p.wait()
		if got := exitCode(p.cmd, err); got != want {
			t.Errorf("%q: exit code %d, want %d", script, got, want)
		}
	}
}

// The supervisor runs as the agent (root on a node): the rank's
// environment, which the user chose, reaches the rank and never the
// supervisor, where LD_PRELOAD or GODEBUG would steer a root process.
func TestSupervisorRunsWithoutTheRanksEnvironment(t *testing.T) {
	box, err := newContainer(Config{DataDir: t.TempDir(), Containment: ContainProcess}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "env")
	// The rank writes its own environment and its parent's (the
	// supervisor's), then exits.
	rank := exec.Command("/bin/sh", "-c", `tr '\0' '\n' < /proc/$$/environ > "$OUT.rank"; tr '\0' '\n' < /proc/$PPID/environ > "$OUT.sup"`)
	big := strings.Repeat("x", 50<<10) // four of them: more than a pipe holds at once
	rank.Env = []string{"OUT=" + out, "PATH=/usr/bin:/bin", "GODEBUG=madvdontneed=1", "USER_CHOSEN=" + big,
		"MORE1=" + big, "MORE2=" + big, "MORE3=" + big}
	p, _, err := box.start(rank, rankPin{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.wait(); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(out + "." + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rankEnv, supEnv := read("rank"), read("sup")
	for _, want := range []string{"GODEBUG=madvdontneed=1", "USER_CHOSEN=" + big, envRankToken + "="} {
		if !strings.Contains(rankEnv, want) {
			t.Errorf("the rank's environment lacks %.40q", want)
		}
	}
	for _, unwanted := range []string{"GODEBUG", "USER_CHOSEN", "OUT="} {
		if strings.Contains(supEnv, unwanted) {
			t.Errorf("the supervisor's environment holds %s: %.200q", unwanted, supEnv)
		}
	}
	if !strings.Contains(supEnv, envRankToken+"=") {
		t.Errorf("the supervisor's environment lacks the rank token (it is part of the rank's tree): %q", supEnv)
	}
}

// killHolders ends the processes carrying one of the tokens, through a
// pidfd checked again, and no other.
func TestKillHoldersEndsOnlyTheTokensProcesses(t *testing.T) {
	start := func(token string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		cmd.Env = []string{envRankToken + "=" + token}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	holder, other := start("tok-kill"), start("tok-keep")
	exited := make(chan error, 1)
	go func() { exited <- holder.Wait() }()
	if n := killHolders(map[string]bool{"tok-kill": true}); n != 1 {
		t.Errorf("found %d holders, want 1", n)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the token's process still runs")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other token's process was killed too: %v", err)
	}
}
