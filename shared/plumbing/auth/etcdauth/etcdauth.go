// Package etcdauth is the etcd half of Lockstep's permissions: each
// identity's etcd role and user, and turning etcd's auth on. It is apart
// from package auth, which the CLI links, because it needs the etcd client.
package etcdauth

import (
	"context"
	"strings"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// EtcdGrant is one key range an etcd role may read or write.
type EtcdGrant struct {
	Key string
	// Prefix makes Key a prefix rather than one key.
	Prefix bool
	Write  bool
}

// EtcdRole is the etcd role of an identity: its name and grants. With
// client-certificate auth etcd takes the user name from the certificate's
// common name, which is the identity's name.
type EtcdRole struct {
	Name   string
	Grants []EtcdGrant
	// Root gives etcd's built-in root role (everything, auth included).
	Root bool
}

// serviceRole is shared by the four services: they are the system of
// record for claims, allocations and assignments.
const serviceRole = "lockstep-service"

// EtcdPermissions is the etcd half of the permission table. A node, like
// Kubernetes' NodeRestriction, may only register itself and report on its
// own assignments: it writes its liveness and inventory keys and its
// running keys (running/<node>/, what its ranks keep alive), reads its
// own assignments, the drain records (to signal its ranks) and its node
// state (an operator's resume returns its withdrawn GPUs), and
// nothing else: no claim, allocation, footprint or assignment, and no key
// of another node. People reach etcd only through the services, except an
// admin (lockstep check, recovery).
func EtcdPermissions(id auth.Identity) (EtcdRole, bool) {
	switch {
	case id.Role == auth.RoleAdmin:
		return EtcdRole{Name: "root", Root: true}, true
	case id.Role.IsService():
		return EtcdRole{Name: serviceRole, Grants: []EtcdGrant{{Key: store.Prefix, Prefix: true, Write: true}}}, true
	case id.Role == auth.RoleNode:
		// Identity names have no '/', so node-1's prefixes never cover
		// node-10's keys.
		return EtcdRole{Name: "node-" + id.Name, Grants: []EtcdGrant{
			{Key: store.NodeKey(id.Name), Write: true},
			{Key: store.InventoryKey(id.Name), Write: true},
			{Key: store.NodeRunningPrefix(id.Name), Prefix: true, Write: true},
			{Key: store.NodeAssignPrefix(id.Name), Prefix: true},
			{Key: store.DrainsPrefix, Prefix: true},
			// Its node state, read-only: a resume returns the GPUs its
			// health checks withdrew.
			{Key: store.NodeStateKey(id.Name)},
		}}, true
	}
	return EtcdRole{}, false
}

// ApplyEtcd creates id's etcd user (certificate auth, no password) and
// role, and grants the role. It is idempotent, so enrolling a node twice
// or re-running setup is harmless. cli must act as root.
func ApplyEtcd(ctx context.Context, cli *clientv3.Client, id auth.Identity) error {
	if err := id.Validate(); err != nil {
		return err
	}
	role, ok := EtcdPermissions(id)
	if !ok {
		return nil // no etcd access for this role
	}
	user := auth.CertName(id) // the common name its certificate logs in with
	if _, err := cli.UserAddWithOptions(ctx, user, "", &clientv3.UserAddOptions{NoPassword: true}); err != nil && !alreadyExists(err) {
		return errors.Wrapf(err, "add etcd user %s", user)
	}
	if !role.Root {
		if _, err := cli.RoleAdd(ctx, role.Name); err != nil && !alreadyExists(err) {
			return errors.Wrapf(err, "add etcd role %s", role.Name)
		}
		for _, g := range role.Grants {
			end := ""
			if g.Prefix {
				end = clientv3.GetPrefixRangeEnd(g.Key)
			}
			perm := clientv3.PermissionType(clientv3.PermRead)
			if g.Write {
				perm = clientv3.PermissionType(clientv3.PermReadWrite)
			}
			if _, err := cli.RoleGrantPermission(ctx, role.Name, g.Key, end, perm); err != nil {
				return errors.Wrapf(err, "grant %s on %s", role.Name, g.Key)
			}
		}
	}
	if _, err := cli.UserGrantRole(ctx, user, role.Name); err != nil {
		return errors.Wrapf(err, "grant etcd role %s to %s", role.Name, user)
	}
	return nil
}

// EnableEtcdAuth turns etcd's auth on, first making the user etcd requires
// for it: root, holding the root role, without a password. Admins log in
// as admin:NAME (ApplyEtcd), granted the root role.
func EnableEtcdAuth(ctx context.Context, cli *clientv3.Client) error {
	if _, err := cli.UserAddWithOptions(ctx, "root", "", &clientv3.UserAddOptions{NoPassword: true}); err != nil && !alreadyExists(err) {
		return errors.Wrap(err, "add etcd root user")
	}
	if _, err := cli.UserGrantRole(ctx, "root", "root"); err != nil {
		return errors.Wrap(err, "grant root")
	}
	_, err := cli.AuthEnable(ctx)
	return errors.Wrap(err, "enable etcd auth")
}

func alreadyExists(err error) bool {
	return err != nil && strings.Contains(err.Error(), "already exists")
}
