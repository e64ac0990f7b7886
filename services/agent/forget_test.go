package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// An assignment deleted while the watch was down is found missing when
// the agent lists again: keepOnly forgets that job's launch as a delete
// event would have, and keeps the launches of jobs still assigned.
func TestKeepOnlyForgetsTheLaunchesOfJobsNoLongerAssigned(t *testing.T) {
	e := newExecutor(Config{DataDir: t.TempDir()}, nil, nil, slog.New(slog.DiscardHandler), nil)
	e.launched["gone"], e.launched["kept"] = 1, 2
	e.keepOnly(func(jobID string) bool { return jobID == "kept" }, "no longer assigned")
	if e.launchedBefore("gone", 1) {
		t.Error("the launch of a job no longer assigned is still remembered")
	}
	if !e.launchedBefore("kept", 2) {
		t.Error("the launch of a job still assigned was forgotten")
	}
}

// Ranks whose start completes after their registration ended (the node
// lease lost while they started) are killed, not kept: the fence that
// ended the registration has already listed the gangs to kill, so they
// would run on beside their replacements.
func TestStartAfterTheRegistrationEndedKeepsNothing(t *testing.T) {
	env := testenv.Start(t)
	e, _ := testExecutor(t, env, ContainProcess)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	err := e.start(ctx, shAssignment("late", "echo $$ > "+pidFile+"; exec sleep 60"), 0)
	if err == nil {
		t.Fatal("a gang started after its registration ended was kept")
	}
	e.mu.Lock()
	_, kept := e.gangs["late"]
	e.mu.Unlock()
	if kept || e.launchedBefore("late", 1) {
		t.Errorf("a gang started after its registration ended is tracked (kept %v)", kept)
	}
	if raw, err := os.ReadFile(pidFile); err == nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			t.Errorf("its rank (pid %d) still runs", pid)
		}
	}
}

// A fence kills at once a gang already stopping within its grace (a rank
// trapping SIGTERM): its SIGKILL would otherwise wait the grace out, past
// the lease whose end lets the gang's replacement start.
func TestFenceKillsAGangAlreadyStopping(t *testing.T) {
	env := testenv.Start(t)
	e, _ := testExecutor(t, env, ContainProcess)
	e.cfg.StopGrace = 10 * time.Minute
	ready := filepath.Join(t.TempDir(), "ready")
	if err := e.start(context.Background(), shAssignment("stubborn", "trap '' TERM; touch "+ready+"; while :; do sleep 1; done"), 0); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		_, err := os.Stat(ready)
		return err
	})
	e.stop("stubborn", "assignment released") // SIGTERM, ignored; SIGKILL in 10 minutes
	fenced := make(chan struct{})
	go func() {
		e.fenceAll("node lease lost")
		close(fenced)
	}()
	select {
	case <-fenced:
	case <-time.After(time.Minute):
		t.Fatal("the fence waited on a gang's grace instead of killing it")
	}
}
