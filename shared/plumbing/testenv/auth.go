package testenv

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth/etcdauth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// WithAuth starts the servers as a secured cluster runs them: NATS in
// operator mode trusting a fresh authority (anonymous connections are
// refused, each identity gets its permission table), and etcd over TLS with
// client-certificate auth and RBAC on. Env.Bus and Env.Etcd act as admin
// (etcd's root); Env.Auth.Credentials issues any other identity.
func WithAuth() Option { return func(o *options) { o.auth = true } }

// Authority issues credentials for a test cluster started WithAuth.
type Authority struct {
	*auth.Authority
	CA *auth.CA

	trust      auth.ServerTrust
	etcdServer auth.TLSFiles
	dir        string
	etcd       *clientv3.Client // root, set once etcd is up
}

func newAuthority(t testing.TB) *Authority {
	t.Helper()
	now := time.Now()
	a, err := auth.NewAuthority()
	if err != nil {
		t.Fatalf("authority: %v", err)
	}
	trust, err := a.Trust()
	if err != nil {
		t.Fatalf("trust: %v", err)
	}
	dir := t.TempDir()
	ca, err := auth.LoadOrCreateCA(dir, now)
	if err != nil {
		t.Fatalf("CA: %v", err)
	}
	kp, err := ca.Issue(auth.ServerCommonName("etcd"), []string{"127.0.0.1", "localhost"}, auth.UsageServer|auth.UsageClient, time.Hour, now)
	if err != nil {
		t.Fatalf("etcd server certificate: %v", err)
	}
	server, err := ca.WriteFiles(dir, "etcd-server", kp)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return &Authority{Authority: a, CA: ca, trust: trust, etcdServer: server, dir: dir}
}

// rootCredentials are admin's creds and etcd's root certificate, what the
// test's own clients connect with (etcd auth is not on yet: they turn it
// on).
func (a *Authority) rootCredentials(t testing.TB) connection.Credentials {
	t.Helper()
	c := connection.Credentials{Creds: a.creds(t, auth.Identity{Name: "admin", Role: auth.RoleAdmin})}
	c.EtcdCA, c.EtcdCert, c.EtcdKey = a.cert(t, "root")
	return c
}

// Credentials issues id's NATS creds and etcd client certificate, creating
// its etcd user and role (etcdauth.ApplyEtcd), ready for config.Base or
// bus/store options. Identities without etcd access get no certificate.
func (a *Authority) Credentials(t testing.TB, id auth.Identity) connection.Credentials {
	t.Helper()
	c := connection.Credentials{Creds: a.creds(t, id)}
	if _, ok := etcdauth.EtcdPermissions(id); !ok {
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := etcdauth.ApplyEtcd(ctx, a.etcd, id); err != nil {
		t.Fatalf("etcd user for %s: %v", id.Name, err)
	}
	c.EtcdCA, c.EtcdCert, c.EtcdKey = a.cert(t, auth.CertName(id))
	return c
}

func (a *Authority) creds(t testing.TB, id auth.Identity) string {
	t.Helper()
	path := filepath.Join(a.dir, id.Name+".creds")
	if err := a.WriteCreds(path, id, 0, time.Now()); err != nil {
		t.Fatalf("creds for %s: %v", id.Name, err)
	}
	return path
}

// cert issues a client certificate whose common name is the etcd user.
func (a *Authority) cert(t testing.TB, name string) (ca, cert, key string) {
	t.Helper()
	kp, err := a.CA.Issue(name, nil, auth.UsageClient, time.Hour, time.Now())
	if err != nil {
		t.Fatalf("certificate for %s: %v", name, err)
	}
	f, err := a.CA.WriteFiles(a.dir, name, kp)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return f.CA, f.Cert, f.Key
}

// ConnectAs connects to a cluster started WithAuth as id, with id's creds
// (and so its inbox prefix, the only inbox the table lets it read). Errors
// the server sends outside a request, such as permission violations,
// arrive on errs.
func (e *Env) ConnectAs(t testing.TB, id auth.Identity) (b *bus.Bus, errs <-chan error) {
	t.Helper()
	if e.Auth == nil {
		t.Fatal("ConnectAs needs a cluster started with testenv.WithAuth()")
	}
	ch := make(chan error, 64)
	opts := append(e.Auth.Credentials(t, id).BusOptions(), bus.WithAsyncErrors(func(err error) {
		select {
		case ch <- err:
		default:
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, e.NATSURL, id.Name, opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", id.Name, err)
	}
	t.Cleanup(b.Close)
	return b, ch
}
