//go:build !lockstep_client

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// TestMain keeps the developer's own config file and LOCKSTEP_* variables
// out of the tests: every command resolves its connection from them.
func TestMain(m *testing.M) { os.Exit(testenv.RunWithoutUserConfig(m)) }

// The README tour with auth on: dev's config context lets the CLI act as
// admin with no flag; without it the server refuses the connection and the
// CLI says what to pass; a flag beats the context.
func TestCLIWithDevContextActsAsAdmin(t *testing.T) {
	c := startDevClusterWith(t, oneNodeWithAuth)
	spec := writeFile(t, "job.yaml", "name: tour\ngang: {nodes: 1, gpusPerNode: 8}\ncommand: [sleep, '300']\n")

	// No context, no creds: refused, with the way out in the message.
	_, errOut, code := cli(t, "submit", spec, "--nats", c.NATSURL)
	if code == 0 || !strings.Contains(errOut, "Authorization Violation") || !strings.Contains(errOut, "--creds") {
		t.Fatalf("anonymous submit: exit %d, %s; want refused with a hint about --creds", code, errOut)
	}

	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	t.Setenv("LOCKSTEP_CONFIG", cfgPath)
	line, _, err := writeDevContext(cfgPath, c)
	if err != nil || !strings.Contains(line, "is current") {
		t.Fatalf("writeDevContext: %q, %v", line, err)
	}
	out, errOut, code := cli(t, "submit", spec)
	if code != 0 {
		t.Fatalf("submit through the dev context: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	// submit returns once the submission is stored; admission writes the
	// record a moment later.
	testenv.Eventually(t, 10*time.Second, func() error {
		if out, errOut, code := cli(t, "queue"); code != 0 || !strings.Contains(out, id) {
			return fmt.Errorf("queue through the dev context: exit %d, %s %s", code, out, errOut)
		}
		return nil
	})

	// check reaches etcd (TLS, client certificate) through the context too.
	// The job may be mid-reservation: with the default settle, check reports
	// only violations that persist, not a snapshot taken between two writes.
	if out, errOut, code := cli(t, "check"); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("check through the dev context: exit %d, %s %s", code, out, errOut)
	}

	// --creds on the command line beats the context: a creds file that is
	// not there fails by its name.
	_, errOut, code = cli(t, "queue", "--creds", filepath.Join(t.TempDir(), "nobody.creds"))
	if code == 0 || !strings.Contains(errOut, "nobody.creds") {
		t.Fatalf("--creds over the context: exit %d, %s", code, errOut)
	}
	// So does LOCKSTEP_CREDS, and the flag beats it.
	t.Setenv("LOCKSTEP_CREDS", filepath.Join(t.TempDir(), "env.creds"))
	if _, errOut, code = cli(t, "queue"); code == 0 || !strings.Contains(errOut, "env.creds") {
		t.Fatalf("LOCKSTEP_CREDS over the context: exit %d, %s", code, errOut)
	}
	if out, errOut, code := cli(t, "queue", "--creds", filepath.Join(c.CredsDir, "admin.creds")); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("--creds over LOCKSTEP_CREDS: exit %d, %s %s", code, out, errOut)
	}
}

// dev writes its context but never makes it current over the user's own.
func TestDevContextKeepsTheUsersCurrentContext(t *testing.T) {
	cfgPath := writeFile(t, "config.yaml", "current-context: prod\ncontexts:\n  prod: {nats: 'tls://prod:4222', creds: /p.creds}\n")
	c := &devcluster.Cluster{NATSURL: "nats://127.0.0.1:4222", CredsDir: "/data/creds"}
	c.Admin.Creds = "/data/creds/admin.creds"
	line, _, err := writeDevContext(cfgPath, c)
	if err != nil || !strings.Contains(line, "unchanged") || !strings.Contains(line, "--context dev") {
		t.Fatalf("writeDevContext: %q, %v", line, err)
	}
	cfg, err := connection.LoadCLIConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "prod" || cfg.Contexts["dev"].Creds != "/data/creds/admin.creds" || cfg.Contexts["prod"].Creds != "/p.creds" {
		t.Fatalf("config after dev: %+v", cfg)
	}
}
