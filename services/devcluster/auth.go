package devcluster

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/auth"
)

// DemoUsers are the people `lockstep dev` issues credentials for, besides
// admin: two users, so that one can try what another's jobs allow.
var demoUsers = []string{"alice", "bob"}

// devAuth is a dev cluster's authority: it lives in the data dir, so
// credentials issued by one run stay valid in the next.
type devAuth struct {
	authority *auth.Authority
	trust     auth.ServerTrust
	dir       string // where creds files go

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
func newDevAuth(dataDir string) (*devAuth, error) {
	a, err := auth.LoadOrCreateAuthority(AuthorityDir(dataDir))
	if err != nil {
		return nil, errors.Wrap(err, "dev authority")
	}
	trust, err := a.Trust()
	if err != nil {
		return nil, errors.Wrap(err, "dev authority")
	}
	d := &devAuth{authority: a, trust: trust, dir: CredsDir(dataDir)}
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
