package etcdauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth/etcdauth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// etcdAs connects to env's etcd as id, creating its etcd user and role.
func etcdAs(t *testing.T, env *testenv.Env, id auth.Identity) *clientv3.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := store.Connect(ctx, env.EtcdEndpoint, store.WithCredentials(env.Auth.Credentials(t, id)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// denied asserts that each op fails with etcd's permission denied.
func denied(t *testing.T, who string, ops map[string]func() error) {
	t.Helper()
	for name, op := range ops {
		if err := op(); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s: %s: want permission denied, got %v", who, name, err)
		}
	}
}

// allowed asserts that each op succeeds, in order.
func allowed(t *testing.T, who string, ops []func() error) {
	t.Helper()
	for i, op := range ops {
		if err := op(); err != nil {
			t.Fatalf("%s: op %d: %v", who, i, err)
		}
	}
}

// With etcd's RBAC on, a node identity is held to NodeRestriction: it
// registers itself, keeps its running keys and reads its assignments and
// the drains, exactly as its agent does, and every other write (a claim,
// an allocation, an assignment, a footprint, another node's keys — node-10
// included, whose keys share node-1's prefix as text), every other read,
// and every use of another's lease is refused. The gang service reserves
// through the production transaction.
func TestEtcdRolesHoldNodesToTheirOwnKeys(t *testing.T) {
	env := testenv.Start(t, testenv.WithAuth())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gang := etcdAs(t, env, auth.Identity{Name: "gang", Role: auth.RoleGang})
	node := etcdAs(t, env, auth.Identity{Name: "node-1", Role: auth.RoleNode})
	// Applying twice (re-enrolling) is harmless.
	if err := etcdauth.ApplyEtcd(ctx, env.Etcd, auth.Identity{Name: "node-1", Role: auth.RoleNode}); err != nil {
		t.Fatalf("re-apply: %v", err)
	}

	// node-1 registers, as the agent does: its liveness key under its own
	// lease and its inventory, in one transaction.
	lease, err := node.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	self := store.MustJSON(domain.Node{Name: "node-1", GPUs: 2, Epoch: int64(lease.ID)})
	reg, err := node.Txn(ctx).Then(
		clientv3.OpPut(store.NodeKey("node-1"), self, clientv3.WithLease(lease.ID)),
		clientv3.OpPut(store.InventoryKey("node-1"), self)).Commit()
	if err != nil {
		t.Fatalf("node-1 registers itself: %v", err)
	}

	// The gang service reserves a job on node-1, footprint and all.
	resLease, err := gang.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	a := domain.Allocation{JobID: "job-1", Attempt: 1, State: domain.AllocReserved, Placement: domain.Placement{
		MasterAddr: "node-1", MasterPort: 29500, Nodes: []domain.NodePlacement{{Node: "node-1", GPUs: []int{0}}}}}
	as := domain.Assignment{JobID: "job-1", Attempt: 1, Node: "node-1", Epoch: int64(lease.ID)}
	ok, _, err := store.Reserve(ctx, gang, a, []domain.Assignment{as}, map[string]int64{"node-1": reg.Header.Revision}, resLease.ID)
	if err != nil || !ok {
		t.Fatalf("the gang service reserves: ok %v, err %v", ok, err)
	}
	if _, err := gang.Put(ctx, store.DrainKey("job-1"), "{}"); err != nil {
		t.Fatal(err)
	}
	if _, err := gang.Put(ctx, store.NodeKey("node-10"), "{}"); err != nil {
		t.Fatal(err)
	}

	// node-1 reads its assignments and the drains, and keeps its running
	// key as the agent does: written only while the assignment exists,
	// under its lease, deleted by value.
	assigned, err := node.Get(ctx, store.NodeAssignPrefix("node-1"), clientv3.WithPrefix())
	if err != nil || len(assigned.Kvs) != 1 {
		t.Fatalf("node-1 reads its assignments: %v", err)
	}
	running := store.RunningKey("node-1", "job-1")
	val := store.MustJSON(store.Running{JobID: "job-1", Node: "node-1", Attempt: 1, Epoch: int64(lease.ID)})
	allowed(t, "node-1", []func() error{
		func() error { _, err := node.Get(ctx, store.DrainsPrefix, clientv3.WithPrefix()); return err },
		func() error { _, err := node.Get(ctx, store.NodeStateKey("node-1")); return err },
		func() error {
			resp, err := node.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(store.AssignKey("node-1", "job-1")), "=", assigned.Kvs[0].CreateRevision)).
				Then(clientv3.OpPut(running, val, clientv3.WithLease(lease.ID))).Commit()
			if err == nil && !resp.Succeeded {
				t.Fatal("the running key's guard failed")
			}
			return err
		},
		func() error {
			// A re-registration puts its node key under the lease that
			// now holds the running key too.
			_, err := node.Put(ctx, store.NodeKey("node-1"), self, clientv3.WithLease(lease.ID))
			return err
		},
		func() error {
			_, err := node.Txn(ctx).If(clientv3.Compare(clientv3.Value(running), "=", val)).Then(clientv3.OpDelete(running)).Commit()
			return err
		},
	})

	put := func(key string) func() error {
		return func() error { _, err := node.Put(ctx, key, "{}"); return err }
	}
	get := func(key string, opts ...clientv3.OpOption) func() error {
		return func() error { _, err := node.Get(ctx, key, opts...); return err }
	}
	denied(t, "node-1", map[string]func() error{
		"write a claim":                    put(store.ClaimKey("node-1", 1)),
		"write a port claim":               put(store.PortKey("node-1", 29501)),
		"write an allocation":              put(store.AllocKey("job-1")),
		"write its own assignment":         put(store.AssignKey("node-1", "job-2")),
		"delete its own assignment":        func() error { _, err := node.Delete(ctx, store.AssignKey("node-1", "job-1")); return err },
		"write a footprint":                put(store.FootprintKey("job-1")),
		"write a drain":                    put(store.DrainKey("job-1")),
		"write its node state":             put(store.NodeStateKey("node-1")),
		"write another node's key":         put(store.NodeKey("node-2")),
		"write node-10's key":              put(store.NodeKey("node-10")),
		"write another node's inventory":   put(store.InventoryKey("node-2")),
		"write another node's running key": put(store.RunningKey("node-2", "job-1")),
		"write node-10's running key":      put(store.RunningKey("node-10", "job-1")),
		"write an election key":            put(store.ElectionKey("placement") + "/x"),
		"read another node's assignments":  get(store.NodeAssignPrefix("node-2"), clientv3.WithPrefix()),
		"read node-10's assignments":       get(store.NodeAssignPrefix("node-10"), clientv3.WithPrefix()),
		"read the claims":                  get(store.ClaimsPrefix, clientv3.WithPrefix()),
		"read an allocation":               get(store.AllocKey("job-1")),
		"read a footprint":                 get(store.FootprintKey("job-1")),
		"read another node's key":          get(store.NodeKey("node-10")),
		"read another node's state":        get(store.NodeStateKey("node-10")),
		"read every node's state":          get(store.NodeStatePrefix, clientv3.WithPrefix()),
		"read the running keys of all":     get(store.RunningPrefix, clientv3.WithPrefix()),
		"read everything":                  get(store.Prefix, clientv3.WithPrefix()),
		"attach its key to the reservation": func() error {
			_, err := node.Put(ctx, store.NodeKey("node-1"), self, clientv3.WithLease(resLease.ID))
			return err
		},
		"revoke the reservation's lease": func() error { _, err := node.Revoke(ctx, resLease.ID); return err },
		"compare a claim in a transaction": func() error {
			_, err := node.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(store.ClaimKey("node-1", 0)), "=", 0)).
				Then(clientv3.OpPut(running, val)).Commit()
			return err
		},
	})

	// The gang service does its work: it reads every node's running keys
	// and releases the allocation.
	_, rev, found, err := store.GetAllocation(ctx, gang, "job-1")
	if err != nil || !found {
		t.Fatalf("the gang service reads the allocation: %v", err)
	}
	if ok, err := store.Release(ctx, gang, a, rev); err != nil || !ok {
		t.Fatalf("the gang service releases: ok %v, err %v", ok, err)
	}
	if _, err := gang.Get(ctx, store.RunningPrefix, clientv3.WithPrefix()); err != nil {
		t.Fatalf("the gang service reads the running keys: %v", err)
	}
	// node-1 ends its registration: the lease holds only its own keys.
	if _, err := node.Revoke(ctx, lease.ID); err != nil {
		t.Fatalf("node-1 revokes its own lease: %v", err)
	}
	// A certificate for a name with no etcd user gets nothing.
	kp, err := env.Auth.CA.Issue("mallory", nil, auth.UsageClient, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	files, err := env.Auth.CA.WriteFiles(t.TempDir(), "mallory", kp)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := store.Connect(ctx, env.EtcdEndpoint, store.WithTLS(files.CA, files.Cert, files.Key))
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	if _, err := stranger.Get(ctx, store.Prefix, clientv3.WithPrefix()); err == nil {
		t.Error("a certificate without an etcd user read the store")
	}
}

// An admin and a node of one name would be one etcd user holding both
// roles, the node's certificate logging in with root. Their certificates
// name different etcd users, each holding its own identity's role only,
// whichever is enrolled first, and enrolling either again is fine.
func TestEtcdUserOfOneRoleIsNeverGivenAnother(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		first, then auth.Role
	}{{"ops", auth.RoleAdmin, auth.RoleNode}, {"gpu-1", auth.RoleNode, auth.RoleAdmin}} {
		first, then := auth.Identity{Name: tc.name, Role: tc.first}, auth.Identity{Name: tc.name, Role: tc.then}
		for _, id := range []auth.Identity{first, first, then, then} {
			if err := etcdauth.ApplyEtcd(ctx, env.Etcd, id); err != nil {
				t.Fatalf("enrol %+v: %v", id, err)
			}
		}
		if auth.CertName(first) == auth.CertName(then) {
			t.Fatalf("a %s and a %s named %s log in to etcd as one user, %s", tc.first, tc.then, tc.name, auth.CertName(first))
		}
		for _, id := range []auth.Identity{first, then} {
			role, _ := etcdauth.EtcdPermissions(id)
			u, err := env.Etcd.UserGet(ctx, auth.CertName(id))
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Roles) != 1 || u.Roles[0] != role.Name {
				t.Errorf("etcd user %s (a %s) holds roles %v, want %s only", auth.CertName(id), id.Role, u.Roles, role.Name)
			}
		}
	}
}
