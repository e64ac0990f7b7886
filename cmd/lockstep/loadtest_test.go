package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
)

// A small stream on a small virtual fabric: seconds, not minutes.
var smallLoad = []string{
	"--nodes", "16", "--nodes-per-leaf", "8", "--leaves-per-spine", "2", "--nodes-per-lease", "8",
	"--rate", "20", "--span", "500ms", "--sizes", "1x8:1,2x8:1", "--durations", "100ms:1",
	"--raw-txns", "20", "--no-fsync", "--drain", "30s", "--deadline", "45s",
}

// The command line alone chooses between the embedded cluster and an
// existing one, and refuses flags of the other.
func TestLoadtestChoosesTheCluster(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats", "nats://127.0.0.1:1", "--insecure"}, "--insecure and --compare-auth shape the embedded cluster"},
		{[]string{"--context", "dev", "--compare-auth"}, "--insecure and --compare-auth shape the embedded cluster"},
		{[]string{"--creds", "admin.creds"}, "credentials are for an existing cluster"},
		{[]string{"--etcd-cert", "c.pem", "--etcd-key", "k.pem"}, "credentials are for an existing cluster"},
		{[]string{"--compare-auth", "--rounds", "0"}, "--rounds: 0 is outside 1..10"},
	} {
		_, errOut, code := cli(t, append([]string{"loadtest"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("loadtest %v: %d %q, want usage error %q", tc.args, code, errOut, tc.want)
		}
	}
}

// --compare-auth runs the stream insecure, then with auth, and reports both
// with their ratios.
func TestLoadtestCompareAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two clusters")
	}
	dir := t.TempDir()
	out, errOut, code := cli(t, append([]string{"loadtest", "--compare-auth", "--out", dir}, smallLoad...)...)
	if code != 0 {
		t.Fatalf("loadtest --compare-auth: %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"auth ÷ insecure", "submit → all ranks running p99", "NATS creds, etcd TLS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"compare.md", "compare.json", "insecure-1/summary.md", "auth-1/summary.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("report: %v", err)
		}
	}
	if sum, _ := os.ReadFile(filepath.Join(dir, "auth-1", "summary.md")); !strings.Contains(string(sum), "submitted as alice") {
		t.Errorf("auth summary does not say who submitted:\n%s", sum)
	}
}

// Against an existing cluster with auth, the load test connects with the
// connection flags every client takes (admin's creds and etcd
// certificate) and submits as the user --submit-creds names.
func TestLoadtestExistingClusterWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c := startDevClusterWith(t, func(c *devcluster.Config) {
		oneNodeWithAuth(c)
		c.NoSpanFile = true
	})
	// Every job should land on virtual nodes.
	c.StopService(devcluster.AgentName(devcluster.SimulatedNodes(1, 8, 1)[0].Name))

	// Anonymous, the cluster turns the harness away.
	if _, errOut, code := cli(t, append([]string{"loadtest", "--nats", c.NATSURL, "--etcd", c.EtcdEndpoint, "--out", t.TempDir()}, smallLoad...)...); code == 0 {
		t.Errorf("anonymous load test against a cluster with auth succeeded: %q", errOut)
	}

	dir := t.TempDir()
	a := c.Admin
	args := []string{"loadtest", "--nats", c.NATSURL, "--etcd", c.EtcdEndpoint, "--creds", a.Creds,
		"--etcd-ca", a.EtcdCA, "--etcd-cert", a.EtcdCert, "--etcd-key", a.EtcdKey,
		"--submit-creds", filepath.Join(c.CredsDir, "bob.creds"), "--out", dir}
	out, errOut, code := cli(t, append(args, smallLoad...)...)
	if code != 0 {
		t.Fatalf("loadtest against the cluster: %d\n%s\n%s", code, out, errOut)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"services: external", "submitted as bob", "every one of the"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}
