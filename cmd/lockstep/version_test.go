//go:build !lockstep_client

package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func TestVersionString(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "a148ba7f00d1e2c3b4a5968778695a4b3c2d1e0f"}, {Key: "vcs.modified", Value: "true"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
	}}
	for _, tc := range []struct {
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"v0.4.0-3-gabc", vcs, "v0.4.0-3-gabc (go1.26.1)"},
		{"dev", vcs, "dev-a148ba7f00d1-dirty 2026-12-01T10:00:00Z (go1.26.1)"},
		{"dev", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.5.0"}}, "v0.5.0 (go1.26.1)"},
		{"dev", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}}, "dev (no version recorded) (go1.26.1)"},
		{"v0.6.0", &debug.BuildInfo{GoVersion: "go1.26.1", Settings: []debug.BuildSetting{{Key: "-tags", Value: "netgo,lockstep_client"}}}, "v0.6.0 (go1.26.1, client build)"},
		{"v0.6.0", &debug.BuildInfo{GoVersion: "go1.26.1", Settings: []debug.BuildSetting{{Key: "-tags", Value: "lockstep_clientx"}}}, "v0.6.0 (go1.26.1)"},
	} {
		if got := versionString(tc.set, tc.info); got != tc.want {
			t.Errorf("versionString(%q) = %q, want %q", tc.set, got, tc.want)
		}
	}
	// The command prints it, never the bare "lockstep dev".
	out, _, code := cli(t, "version")
	if code != 0 || !strings.HasPrefix(out, "lockstep ") || out == "lockstep dev\n" || !strings.Contains(out, "(go1.") {
		t.Errorf("version: %d %q", code, out)
	}
}

// Bare lockstep prints the help and exits 0, as kubectl does; help
// columns keep two spaces between the longest names and their summaries.
func TestCLIBareAndHelpColumns(t *testing.T) {
	out, errOut, code := cli(t)
	if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
		t.Errorf("bare lockstep: %d %q %q", code, out, errOut)
	}
	if !strings.Contains(out, "  slurm-shims  link") {
		t.Errorf("root help: slurm-shims runs into its summary:\n%s", out)
	}
	if out, _, _ := cli(t, "auth", "--help"); !strings.Contains(out, "  enroll-node  issue") || !strings.Contains(out, "  init         create") {
		t.Errorf("auth help columns:\n%s", out)
	}
	// Flags and Global Flags share one column.
	out, _, _ = cli(t, "stats", "--help")
	if i, j := column(out, "help for stats"), column(out, "context of the config file"); i < 0 || i != j {
		t.Errorf("stats --help: Flags at column %d, Global Flags at %d:\n%s", i, j, out)
	}
}

// column is the column where text starts on its line of out, -1 if none.
func column(out, text string) int {
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, text); i >= 0 {
			return i
		}
	}
	return -1
}

// One of a thing is singular.
func TestDescribePluralisation(t *testing.T) {
	var buf bytes.Buffer
	d := description{ID: "one", Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1}}}
	printDescription(&buf, d)
	if !strings.Contains(buf.String(), "Gang:       1 node × 1 GPU, 1 rank per node\n") {
		t.Errorf("describe:\n%s", buf.String())
	}
	d.Spec.Gang = jobspec.Gang{Nodes: 2, GPUsPerNode: 16, TasksPerNode: 8}
	buf.Reset()
	printDescription(&buf, d)
	if !strings.Contains(buf.String(), "Gang:       2 nodes × 16 GPUs, 8 ranks per node\n") {
		t.Errorf("describe:\n%s", buf.String())
	}
	if leafSwitches(1) != "1 leaf switch" || leafSwitches(2) != "2 leaf switches" || plural(1, "node") != "1 node" {
		t.Error("plural")
	}
}
