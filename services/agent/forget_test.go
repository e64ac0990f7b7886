package agent

import (
	"log/slog"
	"testing"
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
