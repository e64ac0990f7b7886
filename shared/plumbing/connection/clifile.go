package connection

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
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
	NATS     string `yaml:"nats,omitempty" json:"nats,omitempty"`
	Creds    string `yaml:"creds,omitempty" json:"creds,omitempty"`
	TLSCA    string `yaml:"tlsCA,omitempty" json:"tlsCA,omitempty"`
	TLSCert  string `yaml:"tlsCert,omitempty" json:"tlsCert,omitempty"`
	TLSKey   string `yaml:"tlsKey,omitempty" json:"tlsKey,omitempty"`
	Etcd     string `yaml:"etcd,omitempty" json:"etcd,omitempty"`
	EtcdCA   string `yaml:"etcdCA,omitempty" json:"etcdCA,omitempty"`
	EtcdCert string `yaml:"etcdCert,omitempty" json:"etcdCert,omitempty"`
	EtcdKey  string `yaml:"etcdKey,omitempty" json:"etcdKey,omitempty"`
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

// MaxConfigFile bounds the config file read: a few contexts are a few
// hundred bytes, and a file is hostile input like any other.
const MaxConfigFile = 1 << 20

// LoadCLIConfig reads the config file at path; a missing file (or "") is an
// empty config. The file is checked as strictly as a job spec: one YAML
// document, no field this code does not know (the error names it), no
// duplicate key, context names that ValidContextName accepts.
func LoadCLIConfig(path string) (CLIConfig, error) {
	if path == "" {
		return CLIConfig{}, nil
	}
	raw, err := readConfigFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return CLIConfig{}, nil
	}
	if err != nil {
		return CLIConfig{}, err
	}
	cfg := CLIConfig{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return CLIConfig{}, errors.Wrapf(err, "config file %s", path)
	}
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return CLIConfig{}, errors.Newf("config file %s: more than one YAML document", path)
	}
	cfg.Path = path
	for name, c := range cfg.Contexts {
		if err := ValidContextName(name); err != nil {
			return CLIConfig{}, errors.Wrapf(err, "config file %s: contexts", path)
		}
		for _, s := range settings {
			if p := s.file(&c); s.path && *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(filepath.Dir(path), *p)
			}
		}
		cfg.Contexts[name] = c
	}
	return cfg, nil
}

// readConfigFile reads at most MaxConfigFile bytes of path, and refuses a
// longer file or something that is not a file.
func readConfigFile(path string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, errors.Newf("config file %s: not a regular file", path)
	}
	raw, err := ReadFileUpTo(path, MaxConfigFile)
	return raw, errors.Wrap(err, "config file")
}

// ReadFileUpTo reads a file of at most max bytes: a larger one, or a
// device that never ends such as /dev/zero, is an error naming it, not all
// the memory. A pipe is read as a file is (lockstep submit <(gen-spec)).
func ReadFileUpTo(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, errors.Wrap(err, path)
	}
	if len(raw) > max {
		return nil, errors.Newf("%s: larger than %d bytes", path, max)
	}
	return raw, nil
}

// ValidContextName checks a context's name: 1 to 63 letters, digits, '.',
// '_' or '-', starting with a letter or digit. Names are printed in tables
// and typed on command lines, so nothing else is needed or allowed.
func ValidContextName(name string) error {
	if len(name) > maxContextNameBytes || !contextName.MatchString(name) {
		return errors.Newf("context name %q: want 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// contextName is the rule but its length, checked apart: a bounded repeat
// compiles into that many copies, a cost every command paid at start.
var contextName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

const maxContextNameBytes = 63

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
		return Context{}, errors.Newf("%s %q: no such context in %s (contexts: %v)", field, name, where, c.Names())
	}
	return ctx, nil
}

// Names are the file's contexts, sorted.
func (c CLIConfig) Names() []string {
	out := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
