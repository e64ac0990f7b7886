package bus

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// credentials are what Connect presents to the server: a creds file and
// TLS files. The zero value connects anonymously in plain text.
type credentials struct {
	creds                  string
	tlsCA, tlsCert, tlsKey string
}

// WithCreds connects with a NATS creds file (a user JWT and its seed, as
// `lockstep auth issue` and `nats --creds` use them). Replies to this
// connection's requests arrive under the identity's own inbox prefix, the
// only inbox its permissions let it subscribe to. "" means none.
func WithCreds(path string) Option {
	return func(b *Bus) { b.conn.creds = path }
}

// WithTLS connects over TLS, trusting the CA in caFile (the system's roots
// when ""), and presents the client certificate certFile/keyFile when set
// (servers that verify clients require one). All "" means plain text.
func WithTLS(caFile, certFile, keyFile string) Option {
	return func(b *Bus) { b.conn.tlsCA, b.conn.tlsCert, b.conn.tlsKey = caFile, certFile, keyFile }
}

// natsOptions turns the credentials into nats.go options, checking the
// files first so that a wrong path fails with its name rather than as an
// authorization error from the server.
func (c credentials) natsOptions() ([]nats.Option, auth.Identity, error) {
	var opts []nats.Option
	var id auth.Identity
	if c.creds != "" {
		var err error
		var inbox string
		if id, inbox, err = readCreds(c.creds); err != nil {
			return nil, id, err
		}
		opts = append(opts, nats.UserCredentials(c.creds), nats.CustomInboxPrefix(inbox))
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, id, errors.Newf("TLS client certificate %q and key %q: give both or neither", c.tlsCert, c.tlsKey)
	}
	if c.tlsCA != "" {
		if _, err := os.Stat(c.tlsCA); err != nil {
			return nil, id, errors.Wrap(err, "TLS CA")
		}
		opts = append(opts, nats.RootCAs(c.tlsCA))
	}
	if c.tlsCert != "" {
		opts = append(opts, nats.ClientCert(c.tlsCert, c.tlsKey))
	}
	return opts, id, nil
}

// Identity is who the connection's creds say it is (the zero Identity
// without creds). The server has checked them; a client acting for a
// user puts this name in its request subjects.
func (b *Bus) Identity() auth.Identity { return b.identity }

// CredsIdentity reads who a creds file's user JWT says it is: the name,
// and the role from its "role:" tag (empty for creds Lockstep did not
// issue). The server checks the JWT's signature; this only reads it, to
// choose the inbox prefix the identity's permissions allow and to skip
// what its role may not do.
func CredsIdentity(path string) (auth.Identity, error) {
	id, _, err := readCreds(path)
	return id, err
}

// readCreds reads a creds file's identity and the reply inbox its
// permissions allow: the one subscribe permission _INBOX_….> (creds issued
// before a person's inbox carried the role allow _INBOX_<name> and keep
// working with it), or the identity's own where there is none.
func readCreds(path string) (auth.Identity, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return auth.Identity{}, "", errors.Wrap(err, "creds")
	}
	token, err := jwt.ParseDecoratedJWT(raw)
	if err != nil {
		return auth.Identity{}, "", errors.Wrapf(err, "creds %s: no user JWT", path)
	}
	claims, err := readUserJWT(token)
	if err != nil {
		return auth.Identity{}, "", errors.Wrapf(err, "creds %s: not a user JWT", path)
	}
	if claims.Name == "" {
		return auth.Identity{}, "", errors.Newf("creds %s: the user JWT has no name (Lockstep's reply inboxes are named after it)", path)
	}
	id := auth.Identity{Name: claims.Name}
	for _, tag := range claims.Nats.Tags {
		if r, ok := strings.CutPrefix(tag, "role:"); ok {
			id.Role = auth.Role(r)
		}
	}
	var inboxes []string
	for _, sub := range claims.Nats.Sub.Allow {
		if prefix, ok := strings.CutSuffix(sub, ".>"); ok && strings.HasPrefix(prefix, "_INBOX_") && !strings.ContainsAny(prefix, ".*>") {
			inboxes = append(inboxes, prefix)
		}
	}
	if len(inboxes) == 1 {
		return id, inboxes[0], nil
	}
	return id, id.InboxPrefix(), nil
}

// userJWT is what readCreds reads of a user JWT's claims.
type userJWT struct {
	Name string `json:"name"`
	Nats struct {
		Type string   `json:"type"`
		Tags []string `json:"tags"`
		Sub  struct {
			Allow []string `json:"allow"`
		} `json:"sub"`
	} `json:"nats"`
}

// readUserJWT reads a user JWT's claims without verifying its signature:
// the server verifies the whole JWT when the connection presents it, and
// refuses the connection if it is forged or expired. Verifying it here too
// (jwt.DecodeUserClaims) cost every CLI call more than a millisecond of
// its start-up, for an answer the server gives anyway.
func readUserJWT(token string) (userJWT, error) {
	var c userJWT
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errors.Newf("%d parts, not the 3 of a JWT", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, errors.Wrap(err, "JWT claims")
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, errors.Wrap(err, "JWT claims")
	}
	if c.Nats.Type != string(jwt.UserClaim) {
		return c, errors.Newf("a JWT of type %q", c.Nats.Type)
	}
	return c, nil
}
