//go:build !lockstep_client

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// The config commands: set-context creates and merges, use-context
// persists, get-contexts and current-context show it, delete-context
// removes it; --config points every one of them (and the connection)
// at another file than LOCKSTEP_CONFIG's.
func TestCLIConfigContexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "config.yaml")
	t.Setenv("LOCKSTEP_CONFIG", path)
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d, %s", args, code, errOut)
		}
		return out
	}
	ok("config", "set-context", "lab", "--nats", "nats://lab:4222", "--creds", "lab.creds", "--etcd", "http://lab:2379")
	ok("config", "set-context", "prod", "--nats", "tls://prod:4222")
	if _, errOut, code := cli(t, "config", "current-context"); code != 1 || !strings.Contains(errOut, "no current context") {
		t.Fatalf("current-context with none: exit %d, %s", code, errOut)
	}
	ok("config", "use-context", "lab")
	if out := ok("config", "current-context"); out != "lab\n" {
		t.Fatalf("current-context: %q", out)
	}
	// The connection resolves from the current context, and a flag beats it.
	wd, _ := os.Getwd()
	a, _ := parse(t, "queue")
	if conn, err := a.connection(); err != nil || conn.NATS != "nats://lab:4222" || conn.Creds != filepath.Join(wd, "lab.creds") {
		t.Fatalf("connection from context lab: %+v, %v", conn, err)
	}
	a, _ = parse(t, "queue", "--nats", "nats://flag:1")
	if conn, _ := a.connection(); conn.NATS != "nats://flag:1" || conn.Creds != filepath.Join(wd, "lab.creds") {
		t.Fatalf("--nats over context lab: %+v", conn)
	}
	// set-context changes only what it is given.
	ok("config", "set-context", "lab", "--nats", "nats://lab2:4222")
	out := ok("config", "get-contexts")
	for _, want := range []string{"*        lab   nats://lab2:4222", "http://lab:2379", "prod  tls://prod:4222   (default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("get-contexts lacks %q:\n%s", want, out)
		}
	}
	if out := ok("config", "get-contexts", "-o", "json"); !strings.Contains(out, `"current": true`) || !strings.Contains(out, `"name": "prod"`) {
		t.Errorf("get-contexts -o json:\n%s", out)
	}
	if _, errOut, code := cli(t, "config", "use-context", "nope"); code != 1 || !strings.Contains(errOut, `"nope": no such context`) {
		t.Errorf("use-context nope: exit %d, %s", code, errOut)
	}
	if _, errOut, code := cli(t, "config", "set-context", "bad/name"); code != 2 || !strings.Contains(errOut, "context name") {
		t.Errorf("set-context bad/name: exit %d, %s", code, errOut)
	}
	if out := ok("config", "delete-context", "lab"); !strings.Contains(out, "none is now") {
		t.Errorf("delete-context of the current one: %q", out)
	}
	if out := ok("config", "get-contexts"); strings.Contains(out, "lab") || !strings.Contains(out, "prod") {
		t.Errorf("after delete-context lab:\n%s", out)
	}

	// --config: another file, for the config commands and the connection.
	other := filepath.Join(t.TempDir(), "other.yaml")
	ok("config", "set-context", "x", "--nats", "nats://x:4222", "--config", other)
	ok("config", "use-context", "x", "--config", other)
	a, _ = parse(t, "queue", "--config", other)
	if conn, err := a.connection(); err != nil || conn.NATS != "nats://x:4222" {
		t.Fatalf("connection with --config: %+v, %v", conn, err)
	}
	if st, err := os.Stat(other); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("--config file: %v %v; want mode 0600", st, err)
	}
	// A command that takes no config file refuses --config.
	if _, errOut, code := cli(t, "version", "--config", other); code != 2 || !strings.Contains(errOut, "--config") {
		t.Errorf("version --config: exit %d, %s", code, errOut)
	}
}

// A bad config file fails every command that reads it, naming the file and
// the field, before anything is dialled.
func TestCLIBadConfigFile(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"contexts:\n  a: {nats: x, pasword: y}\n", "pasword"},
		{"contexts: [1]\n", "cannot unmarshal"},
	} {
		path := writeFile(t, "config.yaml", tc.body)
		for _, args := range [][]string{{"queue", "--config", path}, {"config", "get-contexts", "--config", path}} {
			_, errOut, code := cli(t, args...)
			if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, path) {
				t.Errorf("%q with %q: exit %d, %s; want an error naming %s and %q", args, tc.body, code, errOut, path, tc.want)
			}
		}
		// set-context never rewrites a file it cannot read.
		if _, _, code := cli(t, "config", "set-context", "b", "--nats", "nats://b:1", "--config", path); code != 1 {
			t.Errorf("set-context on %q: exit %d", tc.body, code)
		}
		if raw, _ := os.ReadFile(path); string(raw) != tc.body {
			t.Errorf("file rewritten: %q", raw)
		}
	}
	// A current-context the file lacks fails the commands that connect;
	// the config commands still work, so that it can be put right.
	path := writeFile(t, "config.yaml", "current-context: gone\n")
	if _, errOut, code := cli(t, "queue", "--config", path); code != 1 || !strings.Contains(errOut, `current-context "gone": no such context in `+path) {
		t.Errorf("queue with a missing current context: exit %d, %s", code, errOut)
	}
	if _, errOut, code := cli(t, "config", "set-context", "gone", "--nats", "nats://g:1", "--config", path); code != 0 {
		t.Errorf("set-context gone: exit %d, %s", code, errOut)
	}
}

// `lockstep dev --config FILE` writes its dev context there, and the
// banner's suggested commands carry the --config they need.
func TestDevWritesItsContextToConfigFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.yaml")
	banner := devBanner(t, path)
	cfg, err := connection.LoadCLIConfig(path)
	if err != nil || cfg.CurrentContext != "dev" || !strings.HasPrefix(cfg.Contexts["dev"].NATS, "nats://127.0.0.1:") {
		t.Fatalf("config after dev: %+v, %v", cfg, err)
	}
	for _, want := range []string{`context "dev" in ` + path + " is current", "lockstep queue --config " + path + "\n"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
}
