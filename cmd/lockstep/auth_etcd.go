//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth/etcdauth"
)

// authEtcdRBAC creates each named identity's etcd user and role and
// turns etcd's auth on, so that from then on etcd holds every client to
// its role (a node writes only its own keys). It acts as root through the
// admin certificate and is idempotent: a cluster set up before is left as
// it is, with any missing users added.
func (a *app) authEtcdRBAC(cmd *cobra.Command) runE {
	cmd.Long = "Create etcd users and roles for identities (admin is etcd's root) and turn etcd's auth on."
	fs := cmd.Flags()
	endpoints := fs.String("etcd", "", "comma-separated etcd endpoints (https://...)")
	rootCert := fs.String("etcd-root", "", "an admin identity's certificate base path (PATH.crt, PATH.key)")
	caFile := fs.String("ca", "", "the CA certificate etcd's server certificate is signed by")
	cmd.Args = argsAnd("want --etcd, --etcd-root, --ca and at least one NAME=ROLE", func(args []string) bool {
		return *endpoints != "" && *rootCert != "" && *caFile != "" && len(args) > 0
	})
	return func(cmd *cobra.Command, args []string) error {
		ids, err := parseIdentities(args)
		if err != nil {
			return err
		}
		cli, err := etcdAsRoot(*endpoints, *rootCert, *caFile)
		if err != nil {
			return err
		}
		defer cli.Close()
		cctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
		defer cancel()
		for _, id := range ids {
			if err := etcdauth.ApplyEtcd(cctx, cli, id); err != nil {
				return err
			}
		}
		if err := etcdauth.EnableEtcdAuth(cctx, cli); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "etcd auth on at %s; users: %d\n", *endpoints, len(ids))
		return nil
	}
}

// etcdAsRoot connects to etcd with an admin identity's certificate
// (rootCert.crt, rootCert.key), which etcd maps to its root user.
func etcdAsRoot(endpoints, rootCert, caFile string) (*clientv3.Client, error) {
	tlsCfg, err := transport.TLSInfo{CertFile: rootCert + ".crt", KeyFile: rootCert + ".key", TrustedCAFile: caFile}.ClientConfig()
	if err != nil {
		return nil, errors.Wrap(err, "etcd root certificate")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), TLS: tlsCfg, DialTimeout: 5 * time.Second})
	return cli, errors.Wrapf(err, "connect to etcd at %s", endpoints)
}

// parseIdentities reads NAME=ROLE arguments. Without an admin among them
// enabling auth would lock everyone out, so one is required.
func parseIdentities(args []string) ([]auth.Identity, error) {
	var ids []auth.Identity
	admin := false
	for _, a := range args {
		name, role, ok := strings.Cut(a, "=")
		if !ok {
			return nil, usagef("auth etcd-rbac: %q: want NAME=ROLE", a)
		}
		r, err := auth.ParseRole(role)
		if err != nil {
			return nil, usagef("auth etcd-rbac: %q: %v", a, err)
		}
		id := auth.Identity{Name: name, Role: r}
		if err := id.Validate(); err != nil {
			return nil, usagef("auth etcd-rbac: %v", err)
		}
		admin = admin || r == auth.RoleAdmin
		ids = append(ids, id)
	}
	if !admin {
		return nil, usagef("auth etcd-rbac: name an admin identity (NAME=admin): it becomes etcd's root, and auth on without one locks everyone out")
	}
	return ids, nil
}
