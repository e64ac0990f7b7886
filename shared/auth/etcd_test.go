package auth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/auth"
	"github.com/lockstep-dev/lockstep/shared/embedded"
	"github.com/lockstep-dev/lockstep/shared/store"
)

// etcdAs connects to endpoint with a client certificate for name.
func etcdAs(t *testing.T, ca *auth.CA, dir, endpoint, name string) *clientv3.Client {
	t.Helper()
	kp, err := ca.Issue(name, nil, auth.UsageClient, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	files, err := ca.WriteFiles(dir, name, kp)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := transport.TLSInfo{CertFile: files.Cert, KeyFile: files.Key, TrustedCAFile: files.CA}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsCfg, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

func TestEtcdRolesLimitNodes(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	ca, err := auth.LoadOrCreateCA(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue("etcd", []string{"127.0.0.1", "localhost"}, auth.UsageServer|auth.UsageClient, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	serverFiles, err := ca.WriteFiles(dir, "etcd-server", server)
	if err != nil {
		t.Fatal(err)
	}
	es, err := embedded.StartEtcd(embedded.EtcdConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), NoFsync: true, TLS: &serverFiles})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(es.Close)
	if !strings.HasPrefix(es.Endpoint(), "https://") {
		t.Fatalf("endpoint %s is not TLS", es.Endpoint())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	root := etcdAs(t, ca, dir, es.Endpoint(), "root")
	for _, id := range []auth.Identity{{Name: "gang", Role: auth.RoleGang}, {Name: "node-1", Role: auth.RoleNode}} {
		if err := auth.ApplyEtcd(ctx, root, id); err != nil {
			t.Fatal(err)
		}
	}
	// Applying twice (re-enrolling) is harmless.
	if err := auth.ApplyEtcd(ctx, root, auth.Identity{Name: "node-1", Role: auth.RoleNode}); err != nil {
		t.Fatalf("re-apply: %v", err)
	}
	if err := auth.EnableEtcdAuth(ctx, root); err != nil {
		t.Fatal(err)
	}

	gang := etcdAs(t, ca, dir, es.Endpoint(), "gang")
	if _, err := gang.Put(ctx, store.ClaimKey("node-1", 0), "{}"); err != nil {
		t.Fatalf("the gang service writes claims: %v", err)
	}
	if _, err := gang.Put(ctx, store.AssignKey("node-1", "job-1"), "{}"); err != nil {
		t.Fatal(err)
	}

	node := etcdAs(t, ca, dir, es.Endpoint(), "node-1")
	if _, err := node.Put(ctx, store.NodeKey("node-1"), "{}"); err != nil {
		t.Fatalf("node-1 registers itself: %v", err)
	}
	if resp, err := node.Get(ctx, store.NodeAssignPrefix("node-1"), clientv3.WithPrefix()); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("node-1 reads its assignments: %v", err)
	}
	denied := []func() error{
		func() error { _, err := node.Put(ctx, store.ClaimKey("node-1", 0), "{}"); return err },
		func() error { _, err := node.Put(ctx, store.AllocKey("job-1"), "{}"); return err },
		func() error { _, err := node.Put(ctx, store.NodeKey("node-2"), "{}"); return err },
		func() error { _, err := node.Delete(ctx, store.AssignKey("node-1", "job-1")); return err },
		func() error {
			_, err := node.Get(ctx, store.NodeAssignPrefix("node-2"), clientv3.WithPrefix())
			return err
		},
	}
	for i, op := range denied {
		if err := op(); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("node-1 op %d: want permission denied, got %v", i, err)
		}
	}
	// A certificate for a name with no etcd user gets nothing.
	stranger := etcdAs(t, ca, dir, es.Endpoint(), "mallory")
	if _, err := stranger.Get(ctx, store.Prefix, clientv3.WithPrefix()); err == nil {
		t.Error("an unknown certificate read the store")
	}
}
