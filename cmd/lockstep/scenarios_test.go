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
	sum := summaryOf(t, "simulate", "--scenario", "burst", "--count", "40", "--policies", "lockstep")
	wantAll(t, sum, "# Simulation: synthetic (100000 jobs/s, sizes 1x8:40,", "32 nodes × 8 GPUs, 8 nodes per leaf", "stream: 40 jobs", "multi-node jobs on extra leaves",
		"× its lower bound", "gang start p50 by nodes 1: ", "time limits = 2m0s for every job")
	// --limit-factor on the command line wins over the preset's one limit.
	sum = summaryOf(t, "simulate", "--scenario", "burst", "--count", "20", "--policies", "lockstep", "--limit-factor", "3")
	wantAll(t, sum, "time limits = duration × 3")
	if _, errOut, code := cli(t, "simulate", "--scenario", "burst", "--time-limit", "-1s"); code != 2 || !strings.Contains(errOut, "--time-limit") {
		t.Errorf("negative --time-limit: exit %d, %s", code, errOut)
	}
	if _, errOut, code := cli(t, "simulate", "--scenario", "nope"); code != 2 || !strings.Contains(errOut, "none of burst, burst-switches, poisson") {
		t.Errorf("unknown scenario: exit %d, %s", code, errOut)
	}
}

// --scenario probe runs gangs of every size one after another on the
// comparison's 32-node, 4-leaf cluster and says how many held GPUs at
// once; flags given win over the preset's; an unknown scenario is a usage
// error naming the known ones.
func TestLoadtestProbeScenario(t *testing.T) {
	if _, errOut, code := cli(t, "loadtest", "--scenario", "nope"); code != 2 || !strings.Contains(errOut, "none of burst, burst-switches, poisson, probe") {
		t.Errorf("unknown scenario: exit %d, %s", code, errOut)
	}
	if _, errOut, code := cli(t, "loadtest", "--scenario", "probe", "--trace", "philly.csv"); code != 2 || !strings.Contains(errOut, "leave out --trace") {
		t.Errorf("a scenario with a trace: exit %d, %s", code, errOut)
	}
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	sum := summaryOf(t, "loadtest", "--scenario", "probe", "--insecure", "--no-fsync", "--count", "3", "--rate", "1",
		"--durations", "100ms:1", "--nodes-per-lease", "8", "--deadline", "45s")
	wantAll(t, sum, "sizes 1x8:1,2x8:1,4x8:1,8x8:1, durations 100ms:1", "32 nodes × 8 GPUs, 8 nodes per leaf, 4 leaves per spine", "| 3 | 1.0 | 3 | 3 |",
		"gang start p50 by nodes", "held GPUs at once")
}

// summaryOf runs a command that writes a report folder and returns its
// summary.md.
func summaryOf(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	out, errOut, code := cli(t, append(args, "--out", dir)...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// wantAll fails the test for each of wants that text lacks.
func wantAll(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}
