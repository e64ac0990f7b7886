//go:build !lockstep_client

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/loadtest/sim"
)

func TestParseSeeds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []uint64
		err  string
	}{
		{in: "1-5", want: []uint64{1, 2, 3, 4, 5}},
		{in: "1,4,9", want: []uint64{1, 4, 9}},
		{in: " 1-3, 7 ", want: []uint64{1, 2, 3, 7}},
		{in: "0", want: []uint64{0}},
		{in: "5-1", err: "ends before it starts"},
		{in: "1,a", err: `"a": want a seed`},
		{in: "1-x", err: `"1-x": want a range`},
		{in: "", err: "want a seed"},
		{in: "1-3,2", err: "seed 2 is given twice"},
		{in: "1-5000", err: "more than 1000 seeds"},
		{in: "1-600,1000-1500", err: "more than 1000 seeds"},
	} {
		got, err := parseSeeds(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("parseSeeds(%q): error %v, want one saying %q", c.in, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("parseSeeds(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// --seeds runs each seed, at once, into its own folder, and each seed's
// figures are those of a run of that seed alone; the top report holds
// them all. --seed and --seeds together is a usage error.
func TestSimulateSeeds(t *testing.T) {
	args := []string{"simulate", "--scenario", "burst", "--count", "30", "--policies", "lockstep,slurm"}
	dir := t.TempDir()
	if out, errOut, code := cli(t, append(args, "--seeds", "1-3", "--parallel", "2", "--out", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var all sim.SeedsReport
	readJSON(t, filepath.Join(dir, "results.json"), &all)
	if !slices.Equal(all.Seeds, []uint64{1, 2, 3}) || len(all.Runs) != 3 {
		t.Fatalf("seeds %v, %d runs", all.Seeds, len(all.Runs))
	}
	for i, run := range all.Runs {
		if run.Seed != all.Seeds[i] || len(run.Results) != 2 {
			t.Errorf("run %d: seed %d, %d results", i, run.Seed, len(run.Results))
		}
	}

	alone := t.TempDir()
	if out, errOut, code := cli(t, append(args, "--seed", "2", "--out", alone)...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var want, got sim.Report
	readJSON(t, filepath.Join(alone, "results.json"), &want)
	readJSON(t, filepath.Join(sim.SeedDir(dir, 2), "results.json"), &got)
	for k := range want.Results {
		w, g := want.Results[k], got.Results[k]
		if w.Policy != g.Policy || w.Makespan != g.Makespan || w.Utilization != g.Utilization || w.QueueDelay != g.QueueDelay {
			t.Errorf("seed 2's %s beside others: makespan %v, utilization %v, delay %+v; alone: %v, %v, %+v",
				g.Policy, g.Makespan, g.Utilization, g.QueueDelay, w.Makespan, w.Utilization, w.QueueDelay)
		}
		if g.CPU != 0 {
			t.Errorf("%s: CPU %v s reported for a run that shared the process", g.Policy, g.CPU)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, string(raw), "# Simulation over 3 seeds", "- seeds: 1–3", "lockstep, seed by seed", "slurm, seed by seed", "makespan ÷ bound")

	if _, errOut, code := cli(t, append(args, "--seed", "2", "--seeds", "1-2")...); code != 2 || !strings.Contains(errOut, "--seed and --seeds") {
		t.Errorf("--seed with --seeds: exit %d, %s", code, errOut)
	}
	if _, errOut, code := cli(t, append(args, "--seeds", "3-1")...); code != 2 || !strings.Contains(errOut, "--seeds") {
		t.Errorf("a backward range: exit %d, %s", code, errOut)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
