package connection

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// writeConfig writes body to a YAML file of its own (a config file, a
// --queues file) and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// resolve parses args with the connection flags and resolves them against
// env (a map) and the config file it names.
func resolve(t *testing.T, withEtcd bool, env map[string]string, args ...string) (Connection, error) {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := RegisterConnection(fs, withEtcd)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cf.Resolve(func(k string) string { return env[k] })
}

func TestConnectionPrecedenceFlagEnvFileDefault(t *testing.T) {
	file := writeConfig(t, `current-context: lab
contexts:
  lab: {nats: nats://file:4222, creds: lab.creds, tlsCA: /abs/ca.crt, etcd: http://file:2379}
  other: {nats: nats://other:4222}
`)
	dir := filepath.Dir(file)
	env := map[string]string{"LOCKSTEP_CONFIG": file}

	// Nothing set anywhere: the defaults.
	got, err := resolve(t, true, map[string]string{"LOCKSTEP_CONFIG": filepath.Join(t.TempDir(), "missing.yaml")})
	if err != nil || got != (Connection{NATS: DefaultNATS, Etcd: DefaultEtcd}) {
		t.Fatalf("no file, no env, no flags: got %+v, %v; want the defaults", got, err)
	}

	// The file's current context over the defaults; its relative paths are
	// relative to the file.
	got, err = resolve(t, true, env)
	want := Connection{NATS: "nats://file:4222", Etcd: "http://file:2379",
		Credentials: Credentials{Creds: filepath.Join(dir, "lab.creds"), TLSCA: "/abs/ca.crt"}}
	if err != nil || got != want {
		t.Fatalf("file: got %+v, %v; want %+v", got, err, want)
	}

	// The environment over the file, field by field; LOCKSTEP_NATS over NATS_URL.
	env["NATS_URL"] = "nats://natsurl:4222"
	env["LOCKSTEP_CREDS"] = "/env.creds"
	got, _ = resolve(t, true, env)
	if got.NATS != "nats://natsurl:4222" || got.Creds != "/env.creds" || got.TLSCA != "/abs/ca.crt" {
		t.Fatalf("env over file: got %+v", got)
	}
	env["LOCKSTEP_NATS"] = "nats://env:4222"
	got, _ = resolve(t, true, env)
	if got.NATS != "nats://env:4222" {
		t.Fatalf("LOCKSTEP_NATS should beat NATS_URL: got %s", got.NATS)
	}

	// Flags over everything, including an explicit empty value (no creds).
	got, _ = resolve(t, true, env, "--nats", "nats://flag:4222", "--creds", "", "--etcd-ca", "/flag/ca.crt")
	if got.NATS != "nats://flag:4222" || got.Creds != "" || got.EtcdCA != "/flag/ca.crt" || got.TLSCA != "/abs/ca.crt" {
		t.Fatalf("flags over env: got %+v", got)
	}

	// --context (or LOCKSTEP_CONTEXT) picks another context of the file.
	got, _ = resolve(t, true, map[string]string{"LOCKSTEP_CONFIG": file, "LOCKSTEP_CONTEXT": "other"})
	if got.NATS != "nats://other:4222" || got.Creds != "" {
		t.Fatalf("LOCKSTEP_CONTEXT=other: got %+v", got)
	}
	got, _ = resolve(t, true, map[string]string{"LOCKSTEP_CONFIG": file, "LOCKSTEP_CONTEXT": "other"}, "--context", "lab")
	if got.NATS != "nats://file:4222" {
		t.Fatalf("--context lab over LOCKSTEP_CONTEXT: got %+v", got)
	}

	// --config beats LOCKSTEP_CONFIG.
	flagFile := writeConfig(t, "current-context: f\ncontexts:\n  f: {nats: nats://flagfile:4222}\n")
	got, _ = resolve(t, true, map[string]string{"LOCKSTEP_CONFIG": file}, "--config", flagFile)
	if got.NATS != "nats://flagfile:4222" {
		t.Fatalf("--config over LOCKSTEP_CONFIG: got %+v", got)
	}

	// Client commands take no etcd settings.
	got, _ = resolve(t, false, env)
	if got.Etcd != "" {
		t.Fatalf("client connection has etcd %q", got.Etcd)
	}
}

func TestConfigFileErrorsNameFileAndField(t *testing.T) {
	for _, tc := range []struct{ body, context, want string }{
		{"contexts:\n  a: {nats: x, password: y}\n", "", "password"},
		{"current-context: gone\ncontexts:\n  a: {nats: x}\n", "", `current-context "gone": no such context`},
		{"contexts:\n  a: {nats: x}\n", "b", `--context "b": no such context`},
		{"currentContext: a\n", "", "currentContext"},
		{"contexts:\n  a: {nats: x}\n  a: {nats: y}\n", "", "already defined"},
		{"contexts:\n  a: {nats: x}\n---\ncontexts: {}\n", "", "more than one YAML document"},
		{"contexts:\n  'bad name!': {nats: x}\n", "", `context name "bad name!"`},
		{"contexts:\n  a: {nats: [x]}\n", "", "line 2"},
		{"- a\n", "", "cannot unmarshal"},
		{"contexts:\n  a: {nats: x}\n#" + strings.Repeat("x", MaxConfigFile), "", "larger than"},
	} {
		file := writeConfig(t, tc.body)
		var args []string
		if tc.context != "" {
			args = []string{"--context", tc.context}
		}
		_, err := resolve(t, false, map[string]string{"LOCKSTEP_CONFIG": file}, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%q: got %v, want an error naming %s and %q", tc.body, err, file, tc.want)
		}
	}
}

func TestConfigPath(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LOCKSTEP_CONFIG": "/x.yaml", "HOME": "/h"}, "/x.yaml"},
		{map[string]string{"XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}, "/xdg/lockstep/config.yaml"},
		{map[string]string{"HOME": "/h"}, "/h/.config/lockstep/config.yaml"},
		{map[string]string{}, ""},
	} {
		if got := ConfigPath(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.env, got, tc.want)
		}
	}
}

// SetContext (what `lockstep dev` does) makes its context current only
// when the file has no other current context, and keeps the rest of the
// file, comments included.
func TestSetContextNeverSwitchesAnotherCurrentContext(t *testing.T) {
	// No file: created, and the context is current.
	path := filepath.Join(t.TempDir(), "sub", "config.yaml")
	if cur, err := SetContext(path, "dev", Context{NATS: "nats://a:1", Creds: "/d/admin.creds"}); err != nil || !cur {
		t.Fatalf("new file: current=%v err=%v", cur, err)
	}
	cfg, err := LoadCLIConfig(path)
	if err != nil || cfg.CurrentContext != "dev" || cfg.Contexts["dev"].Creds != "/d/admin.creds" {
		t.Fatalf("new file: got %+v, %v", cfg, err)
	}
	// dev is current already: it stays so, and its settings are replaced.
	if cur, err := SetContext(path, "dev", Context{NATS: "nats://b:2"}); err != nil || !cur {
		t.Fatalf("dev current: current=%v err=%v", cur, err)
	}

	// A user's file with another current context.
	user := "# my clusters\ncurrent-context: prod # keep this\ncontexts:\n  prod: {nats: tls://prod:4222, creds: /p.creds}\n"
	path = writeConfig(t, user)
	cur, err := SetContext(path, "dev", Context{NATS: "nats://a:1"})
	if err != nil || cur {
		t.Fatalf("user file: current=%v err=%v; want dev written but not current", cur, err)
	}
	cfg, err = LoadCLIConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "prod" || cfg.Contexts["prod"].Creds != "/p.creds" || cfg.Contexts["dev"].NATS != "nats://a:1" {
		t.Fatalf("user file after SetContext: %+v", cfg)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "# my clusters") || !strings.Contains(string(raw), "# keep this") {
		t.Fatalf("comments lost:\n%s", raw)
	}

	// A file it does not understand is left alone.
	path = writeConfig(t, "contexts: [1, 2]\n")
	if _, err := SetContext(path, "dev", Context{NATS: "nats://a:1"}); err == nil {
		t.Fatal("SetContext rewrote a file it could not read")
	}
	if raw, _ := os.ReadFile(path); string(raw) != "contexts: [1, 2]\n" {
		t.Fatalf("file changed: %s", raw)
	}
}
