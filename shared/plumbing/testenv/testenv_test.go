package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

func TestStartServesBoth(t *testing.T) {
	env := Start(t)
	ctx := context.Background()
	if _, err := env.Etcd.Put(ctx, "/probe", "x"); err != nil {
		t.Fatalf("etcd put: %v", err)
	}
	if err := env.Bus.PublishJSON(ctx, "lockstep.v1.work.report", "", map[string]int{"a": 1}); err != nil {
		t.Fatalf("publish to work stream: %v", err)
	}
}

// WithAuth: anonymous connections are refused; an identity's credentials
// connect to both servers, its JetStream acks arrive in its own inbox, and
// etcd holds it to its role.
func TestStartWithAuth(t *testing.T) {
	env := Start(t, WithAuth())
	ctx := context.Background()
	if _, err := bus.Connect(ctx, env.NATSURL, "anonymous"); err == nil {
		t.Fatal("anonymous NATS connection accepted")
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := store.Connect(short, env.EtcdEndpoint); err == nil {
		t.Fatal("etcd connection without a client certificate accepted")
	}

	node := env.Auth.Credentials(t, auth.Identity{Name: "n1", Role: auth.RoleNode})
	b, err := bus.Connect(ctx, env.NATSURL, "n1", node.BusOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.PublishJSON(ctx, subjects.ReportFrom("n1"), "", map[string]int{"a": 1}); err != nil {
		t.Fatalf("node publishing its own report: %v", err)
	}
	cli, err := store.Connect(ctx, env.EtcdEndpoint, store.WithCredentials(node))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(ctx, store.NodeKey("n1"), "{}"); err != nil {
		t.Fatalf("node writing its own key: %v", err)
	}
	if _, err := cli.Put(ctx, store.NodeKey("n2"), "{}"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("node writing another node's key: got %v, want permission denied", err)
	}
}

// A process given creds still connects to a server without auth (the
// compose cluster, the tests), so a CLI config whose current context holds
// creds does not lock its user out of an insecure cluster.
func TestCredsAgainstServerWithoutAuth(t *testing.T) {
	env := Start(t)
	a, err := auth.NewAuthority()
	if err != nil {
		t.Fatal(err)
	}
	creds := t.TempDir() + "/admin.creds"
	if err := a.WriteCreds(creds, auth.Identity{Name: "admin", Role: auth.RoleAdmin}, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := bus.Connect(context.Background(), env.NATSURL, "t", bus.WithCreds(creds))
	if err != nil {
		t.Fatalf("creds against a server without auth: %v", err)
	}
	defer b.Close()
	if err := b.PublishJSON(context.Background(), subjects.ReportFrom("n1"), "", map[string]int{"a": 1}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}
