package connection

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The config commands' edits persist, keep what they do not touch, and
// leave one file readable by its owner only, with no temporary file.
func TestConfigFileEdits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lockstep", "config.yaml")
	load := func() CLIConfig {
		t.Helper()
		cfg, err := LoadCLIConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	// set-context on no file: created, and no context becomes current.
	if err := UpdateContext(path, "lab", func(c *Context) error { c.NATS = "nats://lab:4222"; c.Creds = "/lab.creds"; return nil }); err != nil {
		t.Fatal(err)
	}
	if cfg := load(); cfg.CurrentContext != "" || cfg.Contexts["lab"] != (Context{NATS: "nats://lab:4222", Creds: "/lab.creds"}) {
		t.Fatalf("after set-context lab: %+v", cfg)
	}
	// A second set-context changes only what it is given.
	if err := UpdateContext(path, "lab", func(c *Context) error { c.NATS = "nats://lab2:4222"; return nil }); err != nil {
		t.Fatal(err)
	}
	if c := load().Contexts["lab"]; c != (Context{NATS: "nats://lab2:4222", Creds: "/lab.creds"}) {
		t.Fatalf("set-context merged into %+v", c)
	}
	if err := UpdateContext(path, "prod", func(c *Context) error { c.NATS = "tls://prod:4222"; return nil }); err != nil {
		t.Fatal(err)
	}

	// use-context persists; an unknown name changes nothing.
	if err := UseContext(path, "prod"); err != nil || load().CurrentContext != "prod" {
		t.Fatalf("use-context prod: %v, %+v", err, load())
	}
	if err := UseContext(path, "nope"); err == nil || !strings.Contains(err.Error(), `"nope": no such context`) || load().CurrentContext != "prod" {
		t.Fatalf("use-context nope: %v, %+v", err, load())
	}

	// delete-context of the current one leaves none current.
	if cur, err := DeleteContext(path, "prod"); err != nil || !cur {
		t.Fatalf("delete-context prod: %v %v", cur, err)
	}
	if cfg := load(); cfg.CurrentContext != "" || len(cfg.Contexts) != 1 || cfg.Contexts["lab"].NATS != "nats://lab2:4222" {
		t.Fatalf("after delete-context prod: %+v", cfg)
	}
	if _, err := DeleteContext(path, "prod"); err == nil {
		t.Fatal("deleting a missing context succeeded")
	}
	if err := UpdateContext(path, "no/slash", func(*Context) error { return nil }); err == nil || !strings.Contains(err.Error(), "context name") {
		t.Fatalf("bad name: %v", err)
	}

	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file mode %v, %v; want 0600", st.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %v; want the config file alone", entries)
	}
}

// A file that was group-readable becomes the owner's alone once written.
func TestConfigFileWriteTightensMode(t *testing.T) {
	path := writeConfig(t, "contexts:\n  a: {nats: x}\n")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UseContext(path, "a"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode())
	}
}

// set-context stores the flags given, relative paths made absolute (the
// file would read them relative to itself), and clears a field set to "".
func TestConnFlagsCopyTo(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := RegisterConnection(fs, true)
	if err := fs.Parse([]string{"--nats", "nats://n:1", "--creds", "me.creds", "--tls-ca", "", "--etcd-ca", "/abs/ca.crt"}); err != nil {
		t.Fatal(err)
	}
	ctx := Context{TLSCA: "/old/ca.crt", Etcd: "http://keep:2379"}
	if err := cf.CopyTo(&ctx); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	want := Context{NATS: "nats://n:1", Creds: filepath.Join(wd, "me.creds"), Etcd: "http://keep:2379", EtcdCA: "/abs/ca.crt"}
	if ctx != want {
		t.Fatalf("got %+v, want %+v", ctx, want)
	}
}
