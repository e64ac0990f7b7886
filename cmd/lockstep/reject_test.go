package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// waitNodes waits until the cluster's node list has n nodes: admission
// judges fit against the inventory, and admits anything while it has none.
func waitNodes(t *testing.T, url string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _ := cli(t, "node", "list", "-o", "json", "--nats", url)
		var nodes []any
		if json.Unmarshal([]byte(out), &nodes) == nil && len(nodes) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node list never showed %d nodes: %s", n, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A job that can never fit: submit without --wait says it was rejected
// and why (exit 1), and queue says a rejected job is hidden.
func TestCLISubmitOfJobThatCanNeverFit(t *testing.T) {
	url := startDevCluster(t)
	waitNodes(t, url, 2)
	// Admission's own view of the inventory is a watch of its own, which
	// the drain service's answer above does not wait for.
	time.Sleep(time.Second)
	spec := writeFile(t, "huge.json", `{"id":"huge-1","gang":{"nodes":3,"gpusPerNode":8},"command":["true"]}`)
	out, errOut, code := cli(t, "submit", spec, "--test-only", "--nats", url)
	if code != 1 || out != "" || !strings.Contains(errOut, "would be rejected: gang:") {
		t.Errorf("submit --test-only of a job that can never fit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// sbatch --test-only asks the same question.
	out, errOut, code = cliIn(t, "#!/bin/sh\n#SBATCH --nodes=3 --gpus-per-node=8\ntrue\n", "sbatch", "--test-only", "--nats", url)
	if code != 1 || out != "" || !strings.Contains(errOut, "would be rejected: gang:") {
		t.Errorf("sbatch --test-only of a job that can never fit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = cli(t, "submit", spec, "--nats", url)
	if code != 1 || out != "huge-1\n" || !strings.Contains(errOut, "job huge-1 rejected: gang:") {
		t.Errorf("submit of a job that can never fit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = cli(t, "queue", "--nats", url)
	if code != 0 || strings.Contains(out, "huge-1") || !strings.Contains(errOut, "1 rejected job not shown (lockstep queue -a shows them") {
		t.Errorf("queue: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Jobs and arrays that fit are not held up by the wait for the verdict
	// (an admitted array has no record under its own ID).
	for _, tc := range []struct{ id, spec string }{
		{"fits-1", `{"id":"fits-1","gang":{"nodes":2,"gpusPerNode":8},"command":["true"]}`},
		{"arr-1", `{"id":"arr-1","array":{"indexes":"3-5"},"gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`},
	} {
		start := time.Now()
		out, errOut, code := cli(t, "submit", writeFile(t, tc.id+".json", tc.spec), "--nats", url)
		if code != 0 || out != tc.id+"\n" || time.Since(start) > 2*time.Second {
			t.Errorf("submit of %s: %d %q %q after %s", tc.id, code, out, errOut, time.Since(start))
		}
	}
}
