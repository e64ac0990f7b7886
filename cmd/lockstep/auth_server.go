//go:build !lockstep_client

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// authServerCert issues a server's certificate: NATS and etcd servers
// present it to clients and to each other (routes, peers), so it is good
// for both ends of a TLS connection. A server is no identity: it gets no
// creds and no etcd user.
func (a *app) authServerCert(cmd *cobra.Command) runE {
	cmd.Long = "Issue a server's TLS certificate (NAME.crt, NAME.key, ca.crt) from the CA in --dir."
	fs := cmd.Flags()
	dir := fs.String("dir", "", "authority directory (from lockstep auth init)")
	hosts := fs.String("hosts", "", "comma-separated DNS names and IPs the server is reached at (required)")
	out := fs.String("out", ".", "directory to write NAME.crt, NAME.key and ca.crt into")
	ttl := fs.Duration("ttl", 365*24*time.Hour, "validity of the certificate")
	cmd.Args = argsAnd("want exactly one NAME, --dir and --hosts", func(args []string) bool { return *dir != "" && *hosts != "" && len(args) == 1 })
	return func(_ *cobra.Command, args []string) error {
		if !domain.ValidUserName(args[0]) {
			return usagef("auth server-cert: name %q: use a-z, 0-9, '_' and '-'", args[0])
		}
		if *ttl <= 0 {
			return usagef("--ttl: %s is not positive", *ttl)
		}
		hostList := splitList(*hosts)
		ca, err := loadCA(*dir)
		if err != nil {
			return err
		}
		kp, err := ca.Issue(auth.ServerCommonName(args[0]), hostList, auth.UsageServer|auth.UsageClient, *ttl, time.Now())
		if err != nil {
			return err
		}
		files, err := ca.WriteFiles(*out, args[0], kp)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "%s, %s: server certificate for %s (CA: %s)\n", files.Cert, files.Key, strings.Join(hostList, ", "), files.CA)
		return nil
	}
}

// authNATSConfig writes the part of a nats-server config that makes it
// trust the authority (operator mode, accounts preloaded); the rest of the
// server's config includes it.
func (a *app) authNATSConfig(cmd *cobra.Command) runE {
	cmd.Long = "Write the nats-server config (operator, system account, memory resolver) that trusts the authority in --dir."
	fs := cmd.Flags()
	dir := fs.String("dir", "", "authority directory (from lockstep auth init)")
	out := fs.String("out", "-", "file to write (- for stdout); include it from the server's config")
	cmd.Args = argsAnd("--dir is required and takes no arguments", func(args []string) bool { return *dir != "" && len(args) == 0 })
	return func(*cobra.Command, []string) error {
		env := a.env
		authority, err := loadAuthority(*dir)
		if err != nil {
			return err
		}
		trust, err := authority.Trust()
		if err != nil {
			return err
		}
		conf, err := trust.NATSConfig()
		if err != nil {
			return err
		}
		if *out == "-" {
			_, err := env.stdout.Write(conf)
			return err
		}
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return errors.Wrapf(err, "create %s", filepath.Dir(*out))
		}
		if err := os.WriteFile(*out, conf, 0o644); err != nil {
			return errors.Wrapf(err, "write %s", *out)
		}
		fmt.Fprintf(env.stdout, "%s: nats-server trust config (include it from the server's config)\n", *out)
		return nil
	}
}

// loadAuthority and loadCA read an existing authority: unlike init, these
// subcommands must not make a new one by mistake (a typo in --dir would
// give a server keys nobody's creds match).
func loadAuthority(dir string) (*auth.Authority, error) {
	if err := requireAuthority(dir, "operator.nk"); err != nil {
		return nil, err
	}
	return auth.LoadOrCreateAuthority(dir)
}

func loadCA(dir string) (*auth.CA, error) {
	if err := requireAuthority(dir, "ca.crt"); err != nil {
		return nil, err
	}
	return auth.LoadOrCreateCA(dir, time.Now())
}

func requireAuthority(dir, file string) error {
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		return errors.WithHint(errors.Newf("no authority in %s", dir), "create one with: lockstep auth init --dir "+dir)
	}
	return nil
}
