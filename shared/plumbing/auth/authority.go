package auth

import (
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/lockstep-dev/lockstep/shared/plumbing/atomicfile"
)

// AccountName is the NATS account every Lockstep identity lives in.
const AccountName = "LOCKSTEP"

// systemAccountName is the NATS server's own account (monitoring, account
// updates); no Lockstep identity is issued in it.
const systemAccountName = "SYS"

// Authority holds a cluster's signing keys: the operator, the system
// account and the LOCKSTEP account. Whoever holds its directory can issue
// any identity, so it lives only where credentials are made (an admin's
// machine, or `lockstep dev`'s data dir), never on nodes.
type Authority struct {
	operator, system, account nkeys.KeyPair
}

// Key files in an authority's directory, each an nkey seed, mode 0600.
const (
	operatorSeedFile = "operator.nk"
	systemSeedFile   = "system-account.nk"
	accountSeedFile  = "account.nk"
)

// NewAuthority makes fresh keys.
func NewAuthority() (*Authority, error) {
	op, err := nkeys.CreateOperator()
	if err != nil {
		return nil, errors.Wrap(err, "create operator key")
	}
	sys, err := nkeys.CreateAccount()
	if err != nil {
		return nil, errors.Wrap(err, "create system account key")
	}
	acc, err := nkeys.CreateAccount()
	if err != nil {
		return nil, errors.Wrap(err, "create account key")
	}
	return &Authority{operator: op, system: sys, account: acc}, nil
}

// LoadOrCreateAuthority reads the authority kept in dir, or creates one
// there when dir holds none. A directory holding some but not all of the
// keys is an error, not a silent new authority: every credential issued
// before would stop working.
func LoadOrCreateAuthority(dir string) (*Authority, error) {
	files := []string{operatorSeedFile, systemSeedFile, accountSeedFile}
	present := 0
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			present++
		}
	}
	switch present {
	case 0:
		a, err := NewAuthority()
		if err != nil {
			return nil, err
		}
		return a, a.save(dir)
	case len(files):
		return loadAuthority(dir)
	}
	return nil, errors.Newf("authority in %s is incomplete (%d of %d key files); restore it or remove it to start over", dir, present, len(files))
}

func loadAuthority(dir string) (*Authority, error) {
	read := func(name string, want nkeys.PrefixByte) (nkeys.KeyPair, error) {
		path := filepath.Join(dir, name)
		seed, err := os.ReadFile(path)
		if err != nil {
			return nil, errors.Wrapf(err, "read %s", path)
		}
		kp, err := nkeys.FromSeed(seed)
		if err != nil {
			return nil, errors.Wrapf(err, "%s: not an nkey seed", path)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, errors.Wrapf(err, "%s", path)
		}
		if !nkeys.IsValidPublicKey(pub) || nkeys.Prefix(pub) != want {
			return nil, errors.Newf("%s: holds the wrong kind of key", path)
		}
		return kp, nil
	}
	op, err := read(operatorSeedFile, nkeys.PrefixByteOperator)
	if err != nil {
		return nil, err
	}
	sys, err := read(systemSeedFile, nkeys.PrefixByteAccount)
	if err != nil {
		return nil, err
	}
	acc, err := read(accountSeedFile, nkeys.PrefixByteAccount)
	if err != nil {
		return nil, err
	}
	return &Authority{operator: op, system: sys, account: acc}, nil
}

func (a *Authority) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, "create %s", dir)
	}
	for name, kp := range map[string]nkeys.KeyPair{operatorSeedFile: a.operator, systemSeedFile: a.system, accountSeedFile: a.account} {
		seed, err := kp.Seed()
		if err != nil {
			return errors.Wrap(err, "seed")
		}
		if err := writeSecret(filepath.Join(dir, name), seed); err != nil {
			return err
		}
	}
	return nil
}

// Creds issues a NATS creds file (a user JWT and its seed) for id, valid
// for ttl (0: no expiry). It is what `nats --creds` and every Lockstep
// process connect with.
func (a *Authority) Creds(id Identity, ttl time.Duration, now time.Time) ([]byte, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, errors.Wrap(err, "create user key")
	}
	pub, err := user.PublicKey()
	if err != nil {
		return nil, errors.Wrap(err, "user public key")
	}
	claims := jwt.NewUserClaims(pub)
	claims.Name = id.Name
	claims.IssuedAt = now.Unix()
	if ttl > 0 {
		claims.Expires = now.Add(ttl).Unix()
	}
	claims.Tags.Add("role:" + string(id.Role))
	rules := Permissions(id)
	claims.Pub.Allow.Add(rules.Pub...)
	claims.Sub.Allow.Add(rules.Sub...)
	if rules.Replies {
		claims.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	}
	token, err := claims.Encode(a.account)
	if err != nil {
		return nil, errors.Wrapf(err, "sign credentials of %s", id.Name)
	}
	seed, err := user.Seed()
	if err != nil {
		return nil, errors.Wrap(err, "user seed")
	}
	creds, err := jwt.FormatUserConfig(token, seed)
	return creds, errors.Wrap(err, "format creds")
}

// WriteCreds issues id's creds into path, readable by its owner only.
func (a *Authority) WriteCreds(path string, id Identity, ttl time.Duration, now time.Time) error {
	creds, err := a.Creds(id, ttl, now)
	if err != nil {
		return err
	}
	return writeSecret(path, creds)
}

// writeSecret writes data to path with mode 0600 through a temporary file,
// so a reader never sees half a key.
func writeSecret(path string, data []byte) error { return atomicfile.Write(path, data, 0o700, 0o600) }
