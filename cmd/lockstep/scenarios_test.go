package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --scenario burst runs the issue-22 stream on its 32-node, 4-leaf
// cluster, with the figures its comparison needs in the report; a flag
// given on the command line wins over the preset's; an unknown scenario
// is a usage error naming the known ones.
func TestSimulateScenario(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := cli(t, "simulate", "--scenario", "burst", "--count", "40", "--policies", "lockstep", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	sum := string(raw)
	for _, want := range []string{"# Simulation: synthetic (100000 jobs/s, sizes 1x8:40,", "32 nodes × 8 GPUs, 8 nodes per leaf", "stream: 40 jobs", "multi-node jobs on extra leaves",
		"× its lower bound", "gang start p50 by nodes 1: ", "time limits = 2m0s for every job"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	// --limit-factor on the command line wins over the preset's one limit.
	dir = t.TempDir()
	if out, errOut, code := cli(t, "simulate", "--scenario", "burst", "--count", "20", "--policies", "lockstep", "--limit-factor", "3", "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "summary.md")); err != nil || !strings.Contains(string(raw), "time limits = duration × 3") {
		t.Errorf("with --limit-factor 3 the summary says (%v):\n%s", err, raw)
	}
	if _, errOut, code := cli(t, "simulate", "--scenario", "burst", "--time-limit", "-1s"); code != 2 || !strings.Contains(errOut, "--time-limit") {
		t.Errorf("negative --time-limit: exit %d, %s", code, errOut)
	}
	if _, errOut, code := cli(t, "simulate", "--scenario", "nope"); code != 2 || !strings.Contains(errOut, "none of burst, burst-switches, poisson") {
		t.Errorf("unknown scenario: exit %d, %s", code, errOut)
	}
}
