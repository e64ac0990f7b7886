package config

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/errors"
	"go.yaml.in/yaml/v3"
)

// CLIConfig is the config file every client command and service reads
// (kubectl and nats-CLI style), by default ~/.config/lockstep/config.yaml:
//
//	current-context: dev
//	contexts:
//	  dev:  {nats: nats://127.0.0.1:4222, creds: /home/me/.cache/lockstep/dev/creds/admin.creds}
//	  prod: {nats: tls://nats.example:4222, creds: prod.creds, tlsCA: ca.crt}
//
// A missing file means defaults; unknown fields are errors naming the file.
type CLIConfig struct {
	// Path is where the file was read from ("" when there was none).
	Path           string             `yaml:"-"`
	CurrentContext string             `yaml:"current-context,omitempty"`
	Contexts       map[string]Context `yaml:"contexts,omitempty"`
}

// Context is one named cluster and the credentials to reach it. Relative
// paths are relative to the config file.
type Context struct {
	NATS     string `yaml:"nats,omitempty"`
	Creds    string `yaml:"creds,omitempty"`
	TLSCA    string `yaml:"tlsCA,omitempty"`
	TLSCert  string `yaml:"tlsCert,omitempty"`
	TLSKey   string `yaml:"tlsKey,omitempty"`
	Etcd     string `yaml:"etcd,omitempty"`
	EtcdCA   string `yaml:"etcdCA,omitempty"`
	EtcdCert string `yaml:"etcdCert,omitempty"`
	EtcdKey  string `yaml:"etcdKey,omitempty"`
}

// ConfigPath is the config file to read: $LOCKSTEP_CONFIG, else
// $XDG_CONFIG_HOME/lockstep/config.yaml, else
// ~/.config/lockstep/config.yaml ("" when there is no home either).
func ConfigPath(getenv func(string) string) string {
	if p := getenv("LOCKSTEP_CONFIG"); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "lockstep", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "lockstep", "config.yaml")
	}
	return ""
}

// LoadCLIConfig reads the config file at path; a missing file (or "") is an
// empty config.
func LoadCLIConfig(path string) (CLIConfig, error) {
	if path == "" {
		return CLIConfig{}, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return CLIConfig{}, nil
	}
	if err != nil {
		return CLIConfig{}, errors.Wrap(err, "config file")
	}
	cfg := CLIConfig{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return CLIConfig{}, errors.Wrapf(err, "config file %s", path)
	}
	cfg.Path = path
	for name, c := range cfg.Contexts {
		for _, p := range []*string{&c.Creds, &c.TLSCA, &c.TLSCert, &c.TLSKey, &c.EtcdCA, &c.EtcdCert, &c.EtcdKey} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(filepath.Dir(path), *p)
			}
		}
		cfg.Contexts[name] = c
	}
	return cfg, nil
}

// Use returns the context called name, or the current context when name
// is "". No context at all is the zero Context (defaults apply); naming
// one the file lacks is an error.
func (c CLIConfig) Use(name string) (Context, error) {
	field := "--context"
	if name == "" {
		name, field = c.CurrentContext, "current-context"
	}
	if name == "" {
		return Context{}, nil
	}
	ctx, ok := c.Contexts[name]
	if !ok {
		where := c.Path
		if where == "" {
			where = "no config file"
		}
		return Context{}, errors.Newf("%s %q: no such context in %s (contexts: %v)", field, name, where, c.names())
	}
	return ctx, nil
}

func (c CLIConfig) names() []string {
	out := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
