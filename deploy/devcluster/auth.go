package devcluster

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth/etcdauth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// demoUsers are the people `lockstep dev` issues credentials for, besides
// admin: two users, so that one can try what another's jobs allow.
var demoUsers = []string{"alice", "bob"}

// devAuth is a dev cluster's authority: it lives in the data dir, so
// credentials issued by one run stay valid in the next.
type devAuth struct {
	authority *auth.Authority
	trust     auth.ServerTrust
	dir       string // where creds files go
	ca        *auth.CA
	// etcdServer is etcd's certificate; admin is etcd's root, kept open to
	// create each identity's etcd user as it starts.
	etcdServer auth.TLSFiles
	admin      *clientv3.Client

	mu sync.Mutex
}

// AuthorityDir and CredsDir are where a dev cluster with auth keeps its
// signing keys and the creds files it issues.
func AuthorityDir(dataDir string) string { return filepath.Join(dataDir, "authority") }

// CredsDir holds one creds file per identity: admin.creds, alice.creds,
// bob.creds, one per service kind and one per node.
func CredsDir(dataDir string) string { return filepath.Join(dataDir, "creds") }

// newDevAuth loads or creates the authority and issues the people's
// credentials; services and nodes get theirs as they start.
func newDevAuth(dataDir, etcdListen string) (*devAuth, error) {
	a, err := auth.LoadOrCreateAuthority(AuthorityDir(dataDir))
	if err != nil {
		return nil, errors.Wrap(err, "dev authority")
	}
	trust, err := a.Trust()
	if err != nil {
		return nil, errors.Wrap(err, "dev authority")
	}
	now := time.Now()
	ca, err := auth.LoadOrCreateCA(AuthorityDir(dataDir), now)
	if err != nil {
		return nil, errors.Wrap(err, "dev CA")
	}
	kp, err := ca.Issue(auth.ServerCommonName("etcd"), etcdHosts(etcdListen), auth.UsageServer|auth.UsageClient, 10*365*24*time.Hour, now)
	if err != nil {
		return nil, errors.Wrap(err, "dev etcd certificate")
	}
	server, err := ca.WriteFiles(AuthorityDir(dataDir), "etcd-server", kp)
	if err != nil {
		return nil, err
	}
	d := &devAuth{authority: a, trust: trust, dir: CredsDir(dataDir), ca: ca, etcdServer: server}
	people := []auth.Identity{{Name: "admin", Role: auth.RoleAdmin}}
	for _, u := range demoUsers {
		people = append(people, auth.Identity{Name: u, Role: auth.RoleUser})
	}
	for _, id := range people {
		if _, err := d.creds(id); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// creds issues id's creds file (again, each start: a file from an older
// authority must not linger) and returns its path. Dev credentials do not
// expire; they are only as secret as the data dir.
func (d *devAuth) creds(id auth.Identity) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	path := filepath.Join(d.dir, id.Name+".creds")
	if err := d.authority.WriteCreds(path, id, 0, time.Now()); err != nil {
		return "", errors.Wrapf(err, "issue dev credentials for %s", id.Name)
	}
	return path, nil
}

// etcdHosts are the names etcd's certificate is valid for: loopback, and
// the host dev listens on.
func etcdHosts(listen string) []string {
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" && !slices.Contains(hosts, h) {
		hosts = append(hosts, h)
	}
	return hosts
}

// etcdCreds issues id's etcd client certificate (common name:
// auth.CertName, its name where it has an etcd user) into the creds dir.
func (d *devAuth) etcdCreds(id auth.Identity) (auth.TLSFiles, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kp, err := d.ca.Issue(auth.CertName(id), nil, auth.UsageClient, 10*365*24*time.Hour, time.Now())
	if err != nil {
		return auth.TLSFiles{}, errors.Wrapf(err, "issue dev etcd certificate for %s", id.Name)
	}
	return d.ca.WriteFiles(d.dir, id.Name, kp)
}

// adminCredentials are admin's creds and etcd certificate.
func (d *devAuth) adminCredentials() (connection.Credentials, error) {
	return d.credentials(auth.Identity{Name: "admin", Role: auth.RoleAdmin})
}

// credentials issues what id connects with: its creds file and, when its
// role reaches etcd, its client certificate.
func (d *devAuth) credentials(id auth.Identity) (connection.Credentials, error) {
	creds, err := d.creds(id)
	if err != nil {
		return connection.Credentials{}, err
	}
	c := connection.Credentials{Creds: creds}
	if _, ok := etcdauth.EtcdPermissions(id); !ok {
		return c, nil
	}
	f, err := d.etcdCreds(id)
	if err != nil {
		return connection.Credentials{}, err
	}
	c.EtcdCA, c.EtcdCert, c.EtcdKey = f.CA, f.Cert, f.Key
	return c, nil
}

// startEtcdAuth connects to etcd as admin, creates admin's etcd user with
// the root role and turns etcd's auth on (all idempotent: a restart on the
// same data dir finds them done). From then on etcd holds every identity
// to its role (etcdauth.EtcdPermissions): a simulated node writes only its own
// keys.
func (d *devAuth) startEtcdAuth(ctx context.Context, endpoint string) error {
	admin, err := d.adminCredentials()
	if err != nil {
		return err
	}
	cli, err := store.Connect(ctx, endpoint, store.WithCredentials(admin))
	if err != nil {
		return err
	}
	if err := etcdauth.ApplyEtcd(ctx, cli, auth.Identity{Name: "admin", Role: auth.RoleAdmin}); err != nil {
		_ = cli.Close()
		return err
	}
	if err := etcdauth.EnableEtcdAuth(ctx, cli); err != nil {
		_ = cli.Close()
		return err
	}
	d.admin = cli
	return nil
}

// identity issues id's credentials and creates its etcd user and role.
func (d *devAuth) identity(ctx context.Context, id auth.Identity) (connection.Credentials, error) {
	if err := etcdauth.ApplyEtcd(ctx, d.admin, id); err != nil {
		return connection.Credentials{}, err
	}
	return d.credentials(id)
}

func (d *devAuth) close() {
	if d != nil && d.admin != nil {
		_ = d.admin.Close()
	}
}
