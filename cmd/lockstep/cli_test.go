package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
)

func startDevCluster(t *testing.T) string {
	t.Helper()
	return startDevClusterC(t).NATSURL
}

// startDevClusterC is startDevCluster for a test that reads etcd too.
func startDevClusterC(t *testing.T) *devcluster.Cluster {
	t.Helper()
	return startDevClusterWith(t, func(*devcluster.Config) {})
}

// startDevClusterWith starts a 2-node dev cluster on free ports, its
// config adjusted by set first (auth, one node, a short TTL, …).
func startDevClusterWith(t *testing.T, set func(*devcluster.Config)) *devcluster.Cluster {
	t.Helper()
	cfg := devcluster.Config{
		DataDir: t.TempDir(), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
		Nodes: 2, GPUsPerNode: 8, Leaves: 1, NoFsync: true, Log: slog.New(slog.DiscardHandler),
	}
	set(&cfg)
	c, err := devcluster.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// oneNodeWithAuth is startDevClusterWith's set for one node with auth on.
func oneNodeWithAuth(c *devcluster.Config) { c.Nodes, c.Auth = 1, true }

func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), &cliEnv{stdout: &o, stderr: &e, stdin: strings.NewReader("")}, args)
	return o.String(), e.String(), code
}

// mustSubmit submits the spec file at spec to the cluster at url, with
// any further flags (--wait) first, and ends the test if submit fails.
func mustSubmit(t *testing.T, url, spec string, flags ...string) {
	t.Helper()
	args := append(append([]string{"submit", spec}, flags...), "--nats", url)
	if _, errOut, code := cli(t, args...); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCLITour(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "job.yaml", "name: tour\ngang: {nodes: 2, gpusPerNode: 8}\ncommand: [sh, -c, 'echo hello from $RANK']\n")
	out, errOut, code := cli(t, "submit", spec, "--wait", "--nats", url)
	if code != 0 {
		t.Fatalf("submit --wait exit %d: %s %s", code, out, errOut)
	}
	id := strings.TrimSpace(out)
	if !strings.HasPrefix(id, "tour-") {
		t.Errorf("job ID %q should derive from the name", id)
	}
	for _, want := range []string{"admitted", "reserved", "running", "succeeded"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("--wait output lacks %s:\n%s", want, errOut)
		}
	}

	out, _, code = cli(t, "queue", "-a", "-o", "json", "--nats", url)
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0]["id"] != id || rows[0]["state"] != "succeeded" {
		t.Errorf("queue -a -o json = %d %s", code, out)
	}

	out, _, code = cli(t, "describe", id, "-o", "json", "--nats", url)
	var d map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("describe -o json = %d %s", code, out)
	}
	if d["id"] != id || d["state"] != "succeeded" || len(d["events"].([]any)) != 4 {
		t.Errorf("describe json lacks id/state/events: %s", out)
	}

	out, _, code = cli(t, "logs", id, "--rank", "3", "--nats", url)
	if code != 0 || strings.TrimSpace(out) != "hello from 3" {
		t.Errorf("logs --rank 3 = %d %q", code, out)
	}
	out, _, _ = cli(t, "logs", id, "--nats", url)
	if strings.Count(out, "hello from") != 16 || !strings.Contains(out, "[rank 15] hello from 15") {
		t.Errorf("logs of all ranks:\n%s", out)
	}
}

func TestCLISubmitBadSpecNamesTheField(t *testing.T) {
	spec := writeFile(t, "bad.json", `{"gang":{"nodes":0,"gpusPerNode":8},"command":["x"]}`)
	// No cluster needed: the CLI validates before it connects.
	_, errOut, code := cli(t, "submit", spec, "--nats", "nats://127.0.0.1:1")
	if code == 0 || !strings.Contains(errOut, "gang.nodes") {
		t.Errorf("exit %d, stderr %q: want an error naming gang.nodes", code, errOut)
	}
}

func TestCLIUsageErrors(t *testing.T) {
	if _, errOut, code := cli(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
	if _, errOut, code := cli(t, "queue", "-o", "xml"); code != 2 || !strings.Contains(errOut, "-o") {
		t.Errorf("bad -o: %d %q", code, errOut)
	}
	if _, _, code := cli(t, "describe"); code != 2 {
		t.Errorf("describe without ID: %d", code)
	}
	// etcd leases are whole seconds: a TTL that is not would be kept on a
	// clock that is off by the fraction.
	if _, errOut, code := cli(t, "agent", "--name", "n1", "--addr", "n1", "--data-dir", t.TempDir(), "--lease-ttl", "2500ms"); code == 0 || !strings.Contains(errOut, "--lease-ttl: 2.5s is not whole seconds") {
		t.Errorf("agent --lease-ttl 2500ms: %d %q", code, errOut)
	}
	// 0 would silently mean the default to gang.Config; the CLI refuses it.
	for _, n := range []string{"0", "513"} {
		if _, errOut, code := cli(t, "gang", "--workers", n); code == 0 || !strings.Contains(errOut, "--workers: "+n+" is outside 1..512") {
			t.Errorf("gang --workers %s: %d %q", n, code, errOut)
		}
	}
	for _, cmd := range []string{"placement", "dev"} {
		if _, errOut, code := cli(t, cmd, "--retention", "0s"); code != 2 || !strings.Contains(errOut, "--retention: 0s is below 1s") {
			t.Errorf("%s --retention 0s: %d %q", cmd, code, errOut)
		}
	}
	if out, _, code := cli(t, "--help"); code != 0 || !strings.Contains(out, "submit") {
		t.Errorf("--help: %d %q", code, out)
	}
}

func TestCLICancelRunningJob(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "long.json", `{"id":"long-1","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`)
	mustSubmit(t, url, spec)
	if _, errOut, code := cli(t, "cancel", "long-1", "--reason", "changed my mind", "--nats", url); code != 0 {
		t.Fatal(errOut)
	}
	// Submitting the id again is refused: the old run's events are not
	// this submission's.
	out, errOut, code := cli(t, "submit", writeFile(t, "again.json", `{"id":"long-1","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`), "--wait", "--nats", url)
	if code != 1 || out != "" || !strings.Contains(errOut, "job long-1 already exists (") || strings.Contains(errOut, "changed my mind") {
		t.Errorf("resubmit: exit %d, stdout %q, stderr %q: want already exists, no replay", code, out, errOut)
	}
	if _, errOut, code := cli(t, "cancel", "no-such-job", "--nats", url); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("cancel of unknown job: %d %q", code, errOut)
	}
}
