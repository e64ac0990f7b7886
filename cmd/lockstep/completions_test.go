package main

import (
	"strings"
	"testing"
)

// Tab completes job IDs, node names and queues from the cluster the
// command line names; with no cluster it suggests nothing, quickly.
func TestCLICompletesFromTheCluster(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "c.json", `{"id":"tab-1","queue":"default","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
	mustSubmit(t, url, spec, "--wait")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "describe", "--nats", url, "ta"}, "tab-1"},
		{[]string{"__complete", "cancel", "--nats", url, ""}, "tab-1"},
		{[]string{"__complete", "node", "drain", "--nats", url, "node-"}, "node-01"},
		{[]string{"__complete", "queue", "--nats", url, "--queue", "d"}, "default"},
	} {
		out, errOut, code := cli(t, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want+"\n") || !strings.Contains(out, ":4") {
			t.Errorf("lockstep %s = %d %q %q; want %s suggested, no file names", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
	out, _, _ := cli(t, "__complete", "describe", "--nats", url, "zz")
	if strings.Contains(out, "tab-1") {
		t.Errorf("suggested a job that does not start with what was typed: %q", out)
	}
	out, _, code := cli(t, "__complete", "describe", "--nats", "nats://127.0.0.1:1", "")
	if code != 0 || strings.TrimSpace(out) != ":4" {
		t.Errorf("with no cluster: %d %q, want no suggestions", code, out)
	}
}
