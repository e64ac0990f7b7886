package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
)

// authority runs `lockstep auth init` in a fresh directory (dir), and
// returns it with another (out) for what the test issues from it.
func authority(t *testing.T) (dir, out string) {
	t.Helper()
	dir, out = t.TempDir(), t.TempDir()
	if _, stderr, code := cli(t, "auth", "init", "--dir", dir); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	return dir, out
}

func TestAuthIssuesCredsTheNATSToolsRead(t *testing.T) {
	dir, out := authority(t)
	stdout, stderr, code := cli(t, "auth", "issue", "alice", "--dir", dir, "--role", "user", "--out", out)
	if code != 0 {
		t.Fatalf("issue: %d %s", code, stderr)
	}
	if !strings.Contains(stdout, "alice.creds") {
		t.Errorf("issue output does not name the creds file: %q", stdout)
	}
	creds, err := os.ReadFile(filepath.Join(out, "alice.creds"))
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		t.Fatalf("creds file: %v", err)
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	if claims.Name != "alice" || !claims.Tags.Contains("role:user") {
		t.Errorf("claims name %q tags %v", claims.Name, claims.Tags)
	}
	if !claims.Pub.Allow.Contains("lockstep.v1.jobs.submit.alice") || claims.Pub.Allow.Contains(">") {
		t.Errorf("alice's publish rights: %v", claims.Pub.Allow)
	}
	if _, err := jwt.ParseDecoratedNKey(creds); err != nil {
		t.Errorf("creds hold no seed: %v", err)
	}
	for _, f := range []string{"alice.crt", "alice.key", "ca.crt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "alice.creds")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("creds file mode: %v %v", fi.Mode(), err)
	}
}

func TestAuthRejectsBadIdentities(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"auth", "issue", "alice", "--dir", dir, "--role", "root"},
		{"auth", "issue", "al.ice", "--dir", dir, "--role", "user"},
		{"auth", "issue", "--dir", dir, "--role", "user"},
		{"auth", "enroll-node", "node-1"},
		{"auth", "frobnicate"},
	} {
		_, stderr, code := cli(t, args...)
		if code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error (2)", args, code, stderr)
		}
	}
	if stdout, _, code := cli(t, "auth", "--help"); code != 0 || !strings.Contains(stdout, "enroll-node") {
		t.Errorf("auth --help: %d %q", code, stdout)
	}
}
