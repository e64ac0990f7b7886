package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/procfs"
	"github.com/lockstep-dev/lockstep/services/agent/reexec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// These tests kill an agent with SIGKILL, so the agent must be a process
// of its own: the test binary re-executed with envTestAgent set runs one
// agent (TestMain) and nothing else.

const envTestAgent = "LOCKSTEP_TEST_AGENT"

// testAgentSpec is what the re-executed test binary needs to run an agent.
type testAgentSpec struct {
	NATS, Etcd, Node, DataDir string
	Containment               Containment
	ContainerRuntime          string
	// ShimTarget is the lockstep binary for the Slurm shims and rank
	// containers' lifelines ("" the test binary, which is not static).
	ShimTarget string
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(envTestAgent); spec != "" {
		os.Exit(runTestAgent(spec))
	}
	os.Exit(m.Run())
}

func runTestAgent(raw string) int {
	var s testAgentSpec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := Run(ctx, Config{
		Base:    config.Base{NATSURL: s.NATS, Etcd: s.Etcd, StreamReplicas: 1, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))},
		Node:    domain.Node{Name: s.Node, Addr: "127.0.0.1", GPUs: 1},
		DataDir: s.DataDir, LeaseTTL: 2 * time.Second, Containment: s.Containment, ContainerRuntime: s.ContainerRuntime,
		ShimTarget: s.ShimTarget,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startAgentProcess runs an agent in a child process and waits until it
// has registered with an epoch other than notEpoch; it returns the
// process and the epoch.
func startAgentProcess(t *testing.T, env *testenv.Env, spec testAgentSpec, notEpoch int64) (*exec.Cmd, int64) {
	t.Helper()
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTestAgent+"="+string(raw))
	logf, err := os.Create(filepath.Join(t.TempDir(), "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// If this test process dies, its agent does too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("agent log:\n%s", b)
		}
	})
	var epoch int64
	testenv.Eventually(t, 20*time.Second, func() error {
		resp, err := env.Etcd.Get(context.Background(), store.NodeKey(spec.Node))
		if err != nil || len(resp.Kvs) == 0 {
			return fmt.Errorf("node not registered (%v)", err)
		}
		var n domain.Node
		if err := json.Unmarshal(resp.Kvs[0].Value, &n); err != nil {
			return err
		}
		if n.Epoch == notEpoch {
			return fmt.Errorf("still the old registration")
		}
		epoch = n.Epoch
		return nil
	})
	return cmd, epoch
}

// assign writes an assignment of a tree-forking rank for the node's
// current registration and returns its processes once they all run.
func assign(t *testing.T, env *testenv.Env, node string, epoch int64) map[int]uint64 {
	t.Helper()
	pids := pidFileIn(t)
	as := shAssignment("j1", treeScript(pids, false))
	as.Node, as.Epoch = node, epoch
	if _, err := env.Etcd.Put(context.Background(), store.AssignKey(node, as.JobID), store.MustJSON(as)); err != nil {
		t.Fatal(err)
	}
	return rankTree(t, pids)
}

// agentOn starts an agent process for node on env, containing ranks as
// mode says (its cgroups swept after the test: sweepAfter), and returns
// its spec, its process and its registration's epoch.
func agentOn(t *testing.T, env *testenv.Env, node string, mode Containment) (testAgentSpec, *exec.Cmd, int64) {
	t.Helper()
	spec := testAgentSpec{NATS: env.NATSURL, Etcd: env.EtcdEndpoint, Node: node, DataDir: t.TempDir(), Containment: mode}
	sweepAfter(t, spec)
	agent, epoch := startAgentProcess(t, env, spec, 0)
	return spec, agent, epoch
}

// sweepAfter removes the cgroups a killed agent left (a restarted agent
// would), so tests leave nothing on the machine.
func sweepAfter(t *testing.T, spec testAgentSpec) {
	t.Cleanup(func() {
		box, err := newContainer(Config{DataDir: spec.DataDir, Containment: spec.Containment}, slog.New(slog.DiscardHandler))
		if err == nil {
			box.sweep()
			box.close()
		}
	})
}

// The finding: after `kill -9` of the agent, a rank's children
// (backgrounded, setsid'd, double-forked) kept running under PID 1. Now
// none of them runs within 5 s, with or without cgroups.
func TestAgentKilledEndsRankTrees(t *testing.T) {
	env := testenv.Start(t)
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			spec, agent, epoch := agentOn(t, env, "k-"+string(mode), mode)
			procs := assign(t, env, spec.Node, epoch)
			if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 5*time.Second, noneRunning(procs))
			if mode == ContainCgroup {
				// The supervisor removed the rank's cgroup and, its last rank
				// gone, the agent's: a dead agent leaves no empty cgroups.
				parent, _ := cgroupParentPath(spec.DataDir)
				testenv.Eventually(t, 5*time.Second, func() error {
					if _, err := os.Stat(parent); !os.IsNotExist(err) {
						return fmt.Errorf("%s still there (%v)", parent, err)
					}
					return nil
				})
			}
		})
	}
}

// An agent that starts kills what its previous incarnation left running
// before it registers. Leftovers are made the one way they still can be:
// the agent is frozen (SIGSTOP), the rank's supervisor killed, then the
// agent killed; the rank's children now run under PID 1 and no
// supervisor or agent saw it happen.
func TestAgentStartEndsLeftovers(t *testing.T) {
	env := testenv.Start(t)
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			spec, agent, epoch := agentOn(t, env, "l-"+string(mode), mode)
			procs := assign(t, env, spec.Node, epoch)
			var sup int
			for pid := range procs {
				p, _ := procfs.Stat(pid)
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PPID)); strings.HasPrefix(string(b), reexec.SupervisorArg0+"\x00") {
					sup = p.PPID
				}
			}
			if sup == 0 {
				t.Fatal("no supervisor found above the rank")
			}
			for _, k := range []struct {
				pid int
				sig syscall.Signal
			}{{agent.Process.Pid, syscall.SIGSTOP}, {sup, syscall.SIGKILL}, {agent.Process.Pid, syscall.SIGKILL}} {
				if err := syscall.Kill(k.pid, k.sig); err != nil {
					t.Fatal(err)
				}
			}
			_ = agent.Wait()
			if len(running(procs)) == 0 {
				t.Fatal("no leftovers to end: the test set up nothing")
			}
			startAgentProcess(t, env, spec, epoch)
			// Registered: by now nothing of the old incarnation runs.
			if err := noneRunning(procs)(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A forged assignment never crashes the agent nor runs: one with no ranks
// made the agent index ranks[0] of an empty list and panic. A valid one
// written after them still runs.
func TestForgedAssignmentsAreRefused(t *testing.T) {
	env := testenv.Start(t)
	spec, agent, epoch := agentOn(t, env, "f1", ContainProcess)
	forged := map[string]domain.Assignment{
		"noranks": {JobID: "noranks", Attempt: 1, Node: "f1", Epoch: epoch, Command: []string{"true"}},
		"a/b":     {JobID: "a/b", Attempt: 1, Node: "f1", Epoch: epoch, Command: []string{"true"}, Ranks: []domain.Rank{{Rank: 0}}},
		"gpu":     {JobID: "gpu", Attempt: 1, Node: "f1", Epoch: epoch, Command: []string{"true"}, Ranks: []domain.Rank{{Rank: 0, GPUs: []int{7}}}},
	}
	for key, as := range forged {
		if _, err := env.Etcd.Put(context.Background(), store.AssignKey("f1", key), store.MustJSON(as)); err != nil {
			t.Fatal(err)
		}
	}
	procs := assign(t, env, spec.Node, epoch)
	if len(procs) != 4 {
		t.Fatalf("valid assignment: %d processes", len(procs))
	}
	if agent.ProcessState != nil {
		t.Fatal("agent exited")
	}
	ents, _ := os.ReadDir(filepath.Join(spec.DataDir, "jobs"))
	for _, e := range ents {
		if e.Name() != "j1" {
			t.Errorf("directory made for a refused assignment: %s", e.Name())
		}
	}
}
