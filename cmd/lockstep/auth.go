//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth/etcdauth"
)

// authCommands are auth's subcommands. Their flags decide their
// arguments, so they check both (usage errors, exit 2).
var authCommands = []command{
	{"", "init", "create the authority: NATS operator and account keys, and a CA", nil, nil, (*app).authInit},
	{"", "issue NAME", "issue an identity: NAME.creds (nats --creds) and, for roles that use etcd, NAME.crt/NAME.key signed by the CA", nil, nil, (*app).authIssue},
	{"", "enroll-node NAME", "issue a node identity and, with --etcd, create its etcd role", nil, nil, (*app).authEnrollNode},
	{"", "server-cert NAME", "issue a NATS or etcd server's TLS certificate (no creds)", nil, nil, (*app).authServerCert},
	{"", "nats-config", "write the nats-server config that trusts this authority", nil, nil, (*app).authNATSConfig},
	{"", "etcd-rbac NAME=ROLE...", "create identities' etcd users and roles and turn etcd's auth on", nil, nil, (*app).authEtcdRBAC},
}

func (a *app) auth(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Make a cluster's credentials. The authority directory (--dir) holds the
		signing keys: keep it on an admin's machine, never on nodes.`)
	a.add(cmd, authCommands)
	return func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

func (a *app) authInit(cmd *cobra.Command) runE {
	cmd.Long = "Create a cluster's authority (NATS signing keys and a CA) in --dir."
	dir := cmd.Flags().String("dir", "", "authority directory (created, mode 0700)")
	cmd.Args = argsAnd("--dir is required and takes no arguments", func(args []string) bool { return *dir != "" && len(args) == 0 })
	return func(*cobra.Command, []string) error {
		if _, err := auth.LoadOrCreateAuthority(*dir); err != nil {
			return err
		}
		if _, err := auth.LoadOrCreateCA(*dir, time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "authority ready in %s (existing keys are kept)\n", *dir)
		return nil
	}
}

func (a *app) authIssue(cmd *cobra.Command) runE {
	cmd.Long = "Issue an identity's credentials from the authority in --dir."
	return a.issue(cmd, "")
}

func (a *app) authEnrollNode(cmd *cobra.Command) runE {
	cmd.Long = "Issue a node's credentials; with --etcd also create its etcd user and role."
	return a.issue(cmd, string(auth.RoleNode))
}

// issue issues one identity; role is fixed for enroll-node.
func (a *app) issue(cmd *cobra.Command, role string) runE {
	fs := cmd.Flags()
	dir := fs.String("dir", "", "authority directory (from lockstep auth init)")
	roleFlag := fs.String("role", role, "role: one of "+rolesList())
	out := fs.String("out", ".", "directory to write NAME.creds (and NAME.crt, NAME.key, ca.crt) into")
	ttl := fs.Duration("ttl", 365*24*time.Hour, "validity of the credentials (0: no expiry for creds)")
	hosts := fs.String("server-hosts", "", "also make the certificate a server certificate for these comma-separated hosts")
	etcdURL := fs.String("etcd", "", "etcd endpoint to create the identity's etcd user and role on (acts as root)")
	rootCert := fs.String("etcd-root", "", "with --etcd: the root client certificate's base path (PATH.crt, PATH.key; CA from --dir)")
	cmd.Args = argsAnd("want exactly one NAME and --dir", func(args []string) bool { return *dir != "" && len(args) == 1 })
	return func(cmd *cobra.Command, args []string) error {
		r, err := auth.ParseRole(*roleFlag)
		if err != nil {
			return usagef("--role: %v", err)
		}
		id := auth.Identity{Name: args[0], Role: r}
		if err := id.Validate(); err != nil {
			return usagef("%v", err)
		}
		if *ttl < 0 {
			return usagef("--ttl: %s is negative (0: creds that do not expire)", *ttl)
		}
		if *etcdURL != "" && *rootCert == "" {
			return usagef("--etcd needs --etcd-root, a root client certificate")
		}
		// Only auth init makes an authority: a mistyped --dir must not
		// issue creds nothing in the cluster trusts.
		authority, err := loadAuthority(*dir)
		if err != nil {
			return err
		}
		ca, err := loadCA(*dir)
		if err != nil {
			return err
		}
		now := time.Now()
		credsPath := filepath.Join(*out, id.Name+".creds")
		if err := authority.WriteCreds(credsPath, id, *ttl, now); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "%s: NATS credentials (use with --creds or nats --creds)\n", credsPath)
		usage := auth.UsageClient
		var serverHosts []string
		if *hosts != "" {
			usage |= auth.UsageServer
			serverHosts = splitList(*hosts)
		}
		certTTL := *ttl
		if certTTL == 0 {
			certTTL = 365 * 24 * time.Hour
		}
		kp, err := ca.Issue(auth.CertName(id), serverHosts, usage, certTTL, now)
		if err != nil {
			return err
		}
		files, err := ca.WriteFiles(*out, id.Name, kp)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "%s, %s: TLS certificate and key (CA: %s)\n", files.Cert, files.Key, files.CA)
		if *etcdURL == "" {
			return nil
		}
		cli, err := etcdAsRoot(*etcdURL, *rootCert, files.CA)
		if err != nil {
			return err
		}
		defer cli.Close()
		// Bounded, as etcd-rbac is: etcd's client waits for a server that
		// never answers.
		ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
		defer cancel()
		if err := etcdauth.ApplyEtcd(ctx, cli, id); err != nil {
			return errors.Wrapf(err, "create %s's etcd user and role on %s", id.Name, *etcdURL)
		}
		fmt.Fprintf(a.env.stdout, "etcd user and role for %s ready on %s\n", id.Name, *etcdURL)
		return nil
	}
}

func rolesList() string {
	var names []string
	for _, r := range auth.Roles() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}
