package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// A sweep submitted at once: a directory of specs and a stream of them
// on stdin are checked first, published together, their IDs printed in
// order; a rejection is named on stderr and makes the exit 1 while the
// others are submitted; one bad spec sends none; --wait wants one spec.
func TestCLISubmitMany(t *testing.T) {
	// Queue "tiny" holds at most 1 GPU: admission rejects a bigger job
	// there, whatever it knows of the nodes yet.
	url := startDevClusterWith(t, func(c *devcluster.Config) {
		c.Queues.Queues = map[string]queue.QueueConfig{"tiny": {GPUQuota: 1}}
	}).NATSURL
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.json":    `{"id":"sweep-a","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`,
		"b.yaml":    "id: sweep-b\ngang: {nodes: 1, gpusPerNode: 2}\ncommand: [\"true\"]\n",
		"c.yml":     "name: sweep-c\ngang: {nodes: 2, gpusPerNode: 8}\ncommand: [\"true\"]\n",
		"notes.txt": "not a spec",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := cli(t, "submit", dir, "--nats", url)
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 3 || ids[0] != "sweep-a" || ids[1] != "sweep-b" || !strings.HasPrefix(ids[2], "sweep-c-") {
		t.Fatalf("submit DIR: exit %d, ids %q, stderr %s", code, ids, errOut)
	}
	if !strings.Contains(errOut, "submitted 3 of 3 jobs in") {
		t.Errorf("no summary on stderr: %s", errOut)
	}
	c := dialTest(t, url)
	for _, id := range ids {
		if _, err := c.Job(context.Background(), id); err != nil {
			t.Errorf("%s: no record after submit returned: %v", id, err)
		}
	}

	// Two YAML documents on stdin, one of which admission rejects (over
	// its queue's quota): the other is submitted.
	stream := "id: sweep-d\ngang: {nodes: 1, gpusPerNode: 1}\ncommand: [\"true\"]\n---\nid: sweep-e\nqueue: tiny\ngang: {nodes: 1, gpusPerNode: 2}\ncommand: [\"true\"]\n"
	out, errOut, code = cliIn(t, stream, "submit", "-", "--nats", url)
	if code != 1 || !slices.Equal(strings.Fields(out), []string{"sweep-d", "sweep-e"}) || !strings.Contains(errOut, `job sweep-e rejected: queue: QuotaExceeded: the job needs 2 GPUs, more than queue "tiny"'s quota of 1`) {
		t.Errorf("stdin stream with a rejection: exit %d, out %q, stderr %s", code, out, errOut)
	}
	if _, err := c.Job(context.Background(), "sweep-d"); err != nil {
		t.Errorf("sweep-d beside the rejected sweep-e: %v", err)
	}

	// One invalid spec (JSON values one after another): nothing is sent.
	out, errOut, code = cliIn(t, `{"id":"sweep-f","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}
{"id":"sweep-g","gang":{"nodes":1,"gpusPerNode":1}}`, "submit", "-", "--nats", url)
	if code != 1 || out != "" || !strings.Contains(errOut, "stdin spec 2: ") || !strings.Contains(errOut, "command") {
		t.Errorf("stream with a bad spec: exit %d, out %q, stderr %s", code, out, errOut)
	}
	time.Sleep(200 * time.Millisecond) // what was published would be admitted by now
	if _, err := c.Job(context.Background(), "sweep-f"); err == nil {
		t.Error("sweep-f was submitted although its sweep had a bad spec")
	}

	// An ID taken already refuses the sweep too, as for one spec.
	_, errOut, code = cli(t, "submit", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.yaml"), "--nats", url)
	if code != 1 || !strings.Contains(errOut, "job sweep-a already exists") || !strings.Contains(errOut, "none was") {
		t.Errorf("resubmitted sweep: exit %d, stderr %s", code, errOut)
	}
	if _, errOut, code = cli(t, "submit", dir, "--wait", "--nats", url); code != 2 || !strings.Contains(errOut, "--wait and --test-only take one job spec; 3 given") {
		t.Errorf("--wait with a sweep: exit %d, stderr %s", code, errOut)
	}
}
