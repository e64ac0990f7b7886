package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

func TestWebTokenFromCreds(t *testing.T) {
	t.Setenv("LOCKSTEP_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	a, err := auth.NewAuthority()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alice.creds")
	if err := a.WriteCreds(path, auth.Identity{Name: "alice", Role: auth.RoleUser}, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "web", "token", "--creds", path, "--ttl", "1h")
	if code != 0 || !strings.HasPrefix(out, "lst2.") || strings.Count(strings.TrimSpace(out), ".") != 3 {
		t.Errorf("web token: %d %q %s", code, out, errOut)
	}
	if _, errOut, code := cli(t, "web", "token", "--creds", path, "--ttl", "48h"); code == 0 || !strings.Contains(errOut, "--ttl") {
		t.Errorf("a 48h token: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, "web", "token", "--creds", ""); code != 2 || !strings.Contains(errOut, "no credentials") {
		t.Errorf("no creds: %d %s", code, errOut)
	}
}

func TestWebRefusesARemoteAddressWithoutAuth(t *testing.T) {
	t.Setenv("LOCKSTEP_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	_, errOut, code := cli(t, "web", "--listen", "0.0.0.0:8080", "--nats", deadNATS, "--etcd=http://127.0.0.1:1", "--creds", "")
	if code == 0 || !strings.Contains(errOut, "not a loopback address") {
		t.Errorf("web --listen 0.0.0.0: %d %s", code, errOut)
	}
}
