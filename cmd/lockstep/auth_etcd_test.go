package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/embedded"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// etcd-rbac turns a TLS etcd that trusts every certificate into one that
// holds each identity to its role: afterwards node-01 writes its own
// running key and is refused a claim; admin is root.
func TestAuthEtcdRBACHoldsNodesToTheirKeys(t *testing.T) {
	dir, out := authority(t)
	if _, stderr, code := cli(t, "auth", "server-cert", "etcd", "--dir", dir, "--hosts", "127.0.0.1,localhost", "--out", out); code != 0 {
		t.Fatalf("server-cert: %d %s", code, stderr)
	}
	for _, a := range [][]string{{"issue", "admin", "--role", "admin"}, {"enroll-node", "node-01"}} {
		if _, stderr, code := cli(t, append([]string{"auth"}, append(a, "--dir", dir, "--out", out)...)...); code != 0 {
			t.Fatalf("%v: %d %s", a, code, stderr)
		}
	}
	es, err := embedded.StartEtcd(embedded.EtcdConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), NoFsync: true,
		TLS: &auth.TLSFiles{CA: filepath.Join(out, "ca.crt"), Cert: filepath.Join(out, "etcd.crt"), Key: filepath.Join(out, "etcd.key")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(es.Close)

	if _, stderr, code := cli(t, "auth", "etcd-rbac", "--etcd", es.Endpoint(), "--ca", filepath.Join(out, "ca.crt"),
		"--etcd-root", filepath.Join(out, "admin"), "node-01=node"); code != 2 || !strings.Contains(stderr, "admin") {
		t.Errorf("without an admin identity: exit %d, %s; want a usage error naming admin", code, stderr)
	}
	stdout, stderr, code := cli(t, "auth", "etcd-rbac", "--etcd", es.Endpoint(), "--ca", filepath.Join(out, "ca.crt"),
		"--etcd-root", filepath.Join(out, "admin"), "admin=admin", "node-01=node")
	if code != 0 || !strings.Contains(stdout, "etcd auth on") {
		t.Fatalf("etcd-rbac: %d %s %s", code, stdout, stderr)
	}

	connect := func(name string) *clientv3.Client {
		tlsCfg, err := transport.TLSInfo{CertFile: filepath.Join(out, name+".crt"), KeyFile: filepath.Join(out, name+".key"),
			TrustedCAFile: filepath.Join(out, "ca.crt")}.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{es.Endpoint()}, TLS: tlsCfg, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	node := connect("node-01")
	if _, err := node.Put(ctx, store.RunningKey("node-01", "job-1"), "{}"); err != nil {
		t.Errorf("node-01 writes its own running key: %v", err)
	}
	if _, err := node.Put(ctx, store.ClaimKey("node-02", 0), "mine"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("node-01 writes a claim: %v, want permission denied", err)
	}
	if _, err := connect("admin").Put(ctx, store.ClaimKey("node-02", 0), "x"); err != nil {
		t.Errorf("admin (root) writes anywhere: %v", err)
	}
}
