package bus_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// tlsServer runs a NATS server that serves TLS from a fresh CA and
// requires a client certificate signed by it.
func tlsServer(t *testing.T) (url string, ca *auth.CA, dir string) {
	t.Helper()
	dir = t.TempDir()
	now := time.Now()
	ca, err := auth.LoadOrCreateCA(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue("nats", []string{"127.0.0.1", "localhost"}, auth.UsageServer, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ca.WriteFiles(dir, "nats-server", kp)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: f.Cert, KeyFile: f.Key, CaFile: f.CA, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		TLSConfig: tc, TLSVerify: true, TLSTimeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats not ready")
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL(), ca, dir
}

// WithTLS verifies the server with the given CA and presents a client
// certificate; a server that requires one refuses a client without.
func TestConnectWithTLS(t *testing.T) {
	url, ca, dir := tlsServer(t)
	kp, err := ca.Issue("alice", nil, auth.UsageClient, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f, err := ca.WriteFiles(dir, "alice", kp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := bus.Connect(ctx, url, "t", bus.WithTLS(f.CA, f.Cert, f.Key))
	if err != nil {
		t.Fatalf("connect with TLS: %v", err)
	}
	defer b.Close()
	if !b.NC.TLSRequired() {
		t.Fatal("connection is not TLS")
	}
	if _, err := bus.Connect(ctx, url, "t", bus.WithTLS(f.CA, "", "")); err == nil {
		t.Fatal("connected without the client certificate the server requires")
	}
	if _, err := bus.Connect(ctx, url, "t"); err == nil {
		t.Fatal("connected in plain text to a TLS server")
	}
}

// Wrong paths fail by name, before the server is asked.
func TestConnectOptionErrorsNameTheFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.creds")
	for _, o := range []bus.Option{bus.WithCreds(missing), bus.WithTLS(missing, "", ""), bus.WithTLS("", missing, "")} {
		_, err := bus.Connect(context.Background(), "nats://127.0.0.1:1", "t", o)
		if err == nil || !strings.Contains(err.Error(), "missing.creds") {
			t.Errorf("got %v, want an error naming %s", err, missing)
		}
	}
}
