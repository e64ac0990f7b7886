package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

const authUsage = `Usage: lockstep auth init|issue|enroll-node|server-cert|nats-config|etcd-rbac [flags]

Make a cluster's credentials. The authority directory (--dir) holds the
signing keys: keep it on an admin's machine, never on nodes.

  init          create the authority: NATS operator and account keys, and a CA
  issue         issue an identity: NAME.creds (nats --creds) and, for roles
                that use etcd, NAME.crt/NAME.key signed by the CA
  enroll-node   issue a node identity and, with --etcd, create its etcd role
  server-cert   issue a NATS or etcd server's TLS certificate (no creds)
  nats-config   write the nats-server config that trusts this authority
  etcd-rbac     create identities' etcd users and roles and turn etcd's auth on

Run 'lockstep auth SUB -h' for a subcommand's flags.`

func runAuth(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.stdout, authUsage)
		return nil
	}
	switch args[0] {
	case "init":
		return runAuthInit(env, args[1:])
	case "issue":
		return runAuthIssue(ctx, env, args[1:], "")
	case "enroll-node":
		return runAuthIssue(ctx, env, args[1:], string(auth.RoleNode))
	case "server-cert":
		return runAuthServerCert(env, args[1:])
	case "nats-config":
		return runAuthNATSConfig(env, args[1:])
	case "etcd-rbac":
		return runAuthEtcdRBAC(ctx, env, args[1:])
	}
	return usagef("auth: unknown subcommand %q (want init, issue, enroll-node, server-cert, nats-config or etcd-rbac)", args[0])
}

func runAuthInit(env *cliEnv, args []string) error {
	fs := newFlags(env, "auth init", "", "Create a cluster's authority (NATS signing keys and a CA) in --dir.")
	dir := fs.String("dir", "", "authority directory (created, mode 0700)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return usagef("auth init: --dir is required and takes no arguments")
	}
	if _, err := auth.LoadOrCreateAuthority(*dir); err != nil {
		return err
	}
	if _, err := auth.LoadOrCreateCA(*dir, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "authority ready in %s (existing keys are kept)\n", *dir)
	return nil
}

// runAuthIssue issues one identity; role is fixed for enroll-node.
func runAuthIssue(ctx context.Context, env *cliEnv, args []string, role string) error {
	name := "auth issue"
	summary := "Issue an identity's credentials from the authority in --dir."
	if role != "" {
		name, summary = "auth enroll-node", "Issue a node's credentials; with --etcd also create its etcd user and role."
	}
	fs := newFlags(env, name, "NAME", summary)
	dir := fs.String("dir", "", "authority directory (from lockstep auth init)")
	roleFlag := fs.String("role", role, "role: one of "+rolesList())
	out := fs.String("out", ".", "directory to write NAME.creds (and NAME.crt, NAME.key, ca.crt) into")
	ttl := fs.Duration("ttl", 365*24*time.Hour, "validity of the credentials (0: no expiry for creds)")
	hosts := fs.String("server-hosts", "", "also make the certificate a server certificate for these comma-separated hosts")
	etcdURL := fs.String("etcd", "", "etcd endpoint to create the identity's etcd user and role on (acts as root)")
	rootCert := fs.String("etcd-root", "", "with --etcd: the root client certificate's base path (PATH.crt, PATH.key; CA from --dir)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *dir == "" || len(pos) != 1 {
		return usagef("%s: want exactly one NAME and --dir", name)
	}
	r, err := auth.ParseRole(*roleFlag)
	if err != nil {
		return usagef("--role: %v", err)
	}
	id := auth.Identity{Name: pos[0], Role: r}
	if err := id.Validate(); err != nil {
		return usagef("%v", err)
	}
	authority, err := auth.LoadOrCreateAuthority(*dir)
	if err != nil {
		return err
	}
	ca, err := auth.LoadOrCreateCA(*dir, time.Now())
	if err != nil {
		return err
	}
	now := time.Now()
	credsPath := filepath.Join(*out, id.Name+".creds")
	if err := authority.WriteCreds(credsPath, id, *ttl, now); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: NATS credentials (use with --creds or nats --creds)\n", credsPath)
	usage := auth.UsageClient
	var serverHosts []string
	if *hosts != "" {
		usage |= auth.UsageServer
		serverHosts = strings.Split(*hosts, ",")
	}
	certTTL := *ttl
	if certTTL == 0 {
		certTTL = 365 * 24 * time.Hour
	}
	kp, err := ca.Issue(id.Name, serverHosts, usage, certTTL, now)
	if err != nil {
		return err
	}
	files, err := ca.WriteFiles(*out, id.Name, kp)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s, %s: TLS certificate and key (CA: %s)\n", files.Cert, files.Key, files.CA)
	if *etcdURL == "" {
		return nil
	}
	if *rootCert == "" {
		return usagef("--etcd needs --etcd-root, a root client certificate")
	}
	cli, err := etcdAsRoot(*etcdURL, *rootCert, files.CA)
	if err != nil {
		return err
	}
	defer cli.Close()
	if err := auth.ApplyEtcd(ctx, cli, id); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "etcd user and role for %s ready on %s\n", id.Name, *etcdURL)
	return nil
}

func rolesList() string {
	var names []string
	for _, r := range auth.Roles() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}
