// Package connection is where a Lockstep cluster is and how to reach it:
// the connection flags, their environment variables and the CLI's config
// file of named contexts (~/.config/lockstep/config.yaml), resolved in
// that order, and the credentials a process presents. Services and the
// CLI alike resolve their connection here; it needs neither the etcd
// client nor the services, so the CLI stays small (store.WithCredentials
// turns the etcd half into store options).
package connection

import (
	"path/filepath"

	"github.com/cockroachdb/errors"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// Default addresses (those of `lockstep dev`).
const (
	DefaultNATS = "nats://127.0.0.1:4222"
	DefaultEtcd = "http://127.0.0.1:2379"
)

// Credentials are how a process proves who it is: a NATS creds file, TLS
// files for NATS and a client certificate for etcd. The zero value
// connects anonymously in plain text, as to a cluster without auth.
type Credentials struct {
	// Creds is a NATS creds file (user JWT and seed).
	Creds string
	// TLSCA, TLSCert and TLSKey are NATS's TLS: the CA to trust and an
	// optional client certificate.
	TLSCA, TLSCert, TLSKey string
	// EtcdCA, EtcdCert and EtcdKey are etcd's TLS; the certificate's common
	// name is the etcd user.
	EtcdCA, EtcdCert, EtcdKey string
}

// BusOptions are the bus.Connect options that present c.
func (c Credentials) BusOptions() []bus.Option {
	return []bus.Option{bus.WithCreds(c.Creds), bus.WithTLS(c.TLSCA, c.TLSCert, c.TLSKey)}
}

// Connection is where a cluster is and how to reach it: what every
// service, agent and client command resolves from flags, environment and
// the config file (Resolve).
type Connection struct {
	NATS string
	Etcd string
	Credentials
}

// setting is one connection field as it is named on the command line, in
// the environment and in a config file context.
type setting struct {
	flag  string
	env   []string // first set wins
	etcd  bool     // only for processes that reach etcd
	path  bool     // a file: in a config file, relative to the file
	usage string
	field func(*Connection) *string
	file  func(*Context) *string
}

// settings lists every connection field once, so the flag, the variable
// and the file key of one field cannot drift apart.
var settings = []setting{
	{"nats", []string{"LOCKSTEP_NATS", "NATS_URL"}, false, false, "NATS server URL(s), comma-separated (default " + DefaultNATS + ")",
		func(c *Connection) *string { return &c.NATS }, func(c *Context) *string { return &c.NATS }},
	{"creds", []string{"LOCKSTEP_CREDS", "NATS_CREDS"}, false, true, "NATS creds file to connect with (none: anonymous)",
		func(c *Connection) *string { return &c.Creds }, func(c *Context) *string { return &c.Creds }},
	{"tls-ca", []string{"LOCKSTEP_TLS_CA"}, false, true, "CA certificate to verify the NATS server with (turns TLS on)",
		func(c *Connection) *string { return &c.TLSCA }, func(c *Context) *string { return &c.TLSCA }},
	{"tls-cert", []string{"LOCKSTEP_TLS_CERT"}, false, true, "client certificate for NATS TLS",
		func(c *Connection) *string { return &c.TLSCert }, func(c *Context) *string { return &c.TLSCert }},
	{"tls-key", []string{"LOCKSTEP_TLS_KEY"}, false, true, "key of --tls-cert",
		func(c *Connection) *string { return &c.TLSKey }, func(c *Context) *string { return &c.TLSKey }},
	{"etcd", []string{"LOCKSTEP_ETCD"}, true, false, "etcd endpoint(s), comma-separated (default " + DefaultEtcd + ")",
		func(c *Connection) *string { return &c.Etcd }, func(c *Context) *string { return &c.Etcd }},
	{"etcd-ca", []string{"LOCKSTEP_ETCD_CA"}, true, true, "CA certificate to verify etcd with",
		func(c *Connection) *string { return &c.EtcdCA }, func(c *Context) *string { return &c.EtcdCA }},
	{"etcd-cert", []string{"LOCKSTEP_ETCD_CERT"}, true, true, "client certificate for etcd (its common name is the etcd user)",
		func(c *Connection) *string { return &c.EtcdCert }, func(c *Context) *string { return &c.EtcdCert }},
	{"etcd-key", []string{"LOCKSTEP_ETCD_KEY"}, true, true, "key of --etcd-cert",
		func(c *Connection) *string { return &c.EtcdKey }, func(c *Context) *string { return &c.EtcdKey }},
}

// ConnFlags are the connection flags of one command, registered on its
// flag set; Resolve reads them after the flags are parsed.
type ConnFlags struct {
	fs      *pflag.FlagSet
	vals    Connection
	context string
	config  string
	etcd    bool
}

// RegisterConnection adds the connection flags to fs: the NATS ones
// always, the etcd ones when withEtcd (services, agents, check), --context
// and --config.
func RegisterConnection(fs *pflag.FlagSet, withEtcd bool) *ConnFlags {
	f := &ConnFlags{fs: fs, etcd: withEtcd}
	for _, s := range settings {
		if s.etcd && !withEtcd {
			continue
		}
		fs.StringVar(s.field(&f.vals), s.flag, "", s.usage+"; env "+s.env[0])
	}
	fs.StringVar(&f.context, "context", "", "context of the config file to use (env LOCKSTEP_CONTEXT; default: its current-context)")
	fs.StringVar(&f.config, "config", "", "config file of contexts (env LOCKSTEP_CONFIG; default $XDG_CONFIG_HOME/lockstep/config.yaml, else ~/.config/lockstep/config.yaml)")
	return f
}

// ConfigPath is the config file this command line reads: --config, else
// ConfigPath's choice from the environment.
func (f *ConnFlags) ConfigPath(getenv func(string) string) string {
	if f.fs.Changed("config") {
		return f.config
	}
	return ConfigPath(getenv)
}

// CopyTo sets in ctx every connection field whose flag the command line
// set (an explicit "" clears it), leaving the others as they are: what
// `lockstep config set-context NAME --nats URL` stores. A relative path is
// made absolute, since the file reads relative paths from its own
// directory, not the directory the command ran in.
func (f *ConnFlags) CopyTo(ctx *Context) error {
	for _, s := range settings {
		if !f.fs.Changed(s.flag) || s.etcd && !f.etcd {
			continue
		}
		v := *s.field(&f.vals)
		if s.path && v != "" && !filepath.IsAbs(v) {
			abs, err := filepath.Abs(v)
			if err != nil {
				return errors.Wrapf(err, "--%s", s.flag)
			}
			v = abs
		}
		*s.file(ctx) = v
	}
	return nil
}

// Resolve fills the connection from, in order of precedence, the flags set
// on the command line, the environment (getenv), the config file's chosen
// context, and the defaults. Each field is resolved on its own, as
// kubectl does: `--nats` on the command line keeps the creds of the
// current context. Paths in the config file are relative to the file.
func (f *ConnFlags) Resolve(getenv func(string) string) (Connection, error) {
	conn := Connection{NATS: DefaultNATS}
	if f.etcd {
		conn.Etcd = DefaultEtcd
	}
	name := f.context
	if name == "" {
		name = getenv("LOCKSTEP_CONTEXT")
	}
	file, err := LoadCLIConfig(f.ConfigPath(getenv))
	if err != nil {
		return Connection{}, err
	}
	ctx, err := file.Use(name)
	if err != nil {
		return Connection{}, err
	}
	for _, s := range settings {
		if s.etcd && !f.etcd {
			continue
		}
		dst := s.field(&conn)
		if v := *s.file(&ctx); v != "" {
			*dst = v
		}
		for i := len(s.env) - 1; i >= 0; i-- { // the first variable wins
			if v := getenv(s.env[i]); v != "" {
				*dst = v
			}
		}
		if f.fs.Changed(s.flag) {
			*dst = *s.field(&f.vals)
		}
	}
	return conn, nil
}
