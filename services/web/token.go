package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// A sign-in token proves, without a secret shared with the web service,
// that its bearer holds a cluster identity's NATS credentials: it carries
// the identity's user JWT (signed by the cluster's account, as every
// creds file's is) and a short claim (audience, issue and expiry times)
// signed with the JWT's own user key, the seed beside it in the creds
// file. The web service checks the JWT against the account its own
// credentials were issued by, then the claim's signature against the
// JWT's subject: only someone holding the seed can make one, and it names
// whoever the JWT names, with the role the JWT's tag gives.
//
// Form: lst2.<base64url JWT>.<base64url claim>.<base64url signature>.
// The signature is over signedClaim(claim), not the claim alone.

// tokenPrefix versions the form. lst1 signed the bare claim: see
// signedClaim.
const tokenPrefix = "lst2"

// signedClaim is what a token's signature covers: the claim behind a
// label ending in a 0xFF byte. The user key signs other things too: the
// NATS client signs whatever nonce a server's INFO names, so a rogue
// server (or one reached without TLS through someone in the middle) could
// send a nonce that is a dashboard claim and keep the signature as a
// token. A nonce is a JSON string, decoded into valid UTF-8, which never
// holds a 0xFF byte, so no nonce is ever these bytes.
func signedClaim(claim []byte) []byte {
	return append([]byte("lockstep-web-token\xff"), claim...)
}

// tokenAudience keeps a signature made for the dashboard from being
// replayed anywhere else that checks user-key signatures.
const tokenAudience = "lockstep-web"

// MaxTokenTTL bounds how long a token is valid.
const MaxTokenTTL = 24 * time.Hour

// tokenSkew is how far ahead of this replica's clock a token's issue time
// may be (another machine's clock made it).
const tokenSkew = time.Minute

// tokenClaim is the signed part.
type tokenClaim struct {
	Audience string `json:"aud"`
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
}

// Identity is who a token names, until when.
type Identity struct {
	Name, Role string
	Expires    time.Time
}

var b64 = base64.RawURLEncoding

// IssueToken makes a sign-in token from a creds file's contents, valid
// for ttl (at most MaxTokenTTL) from now.
func IssueToken(creds []byte, ttl time.Duration, now time.Time) (string, error) {
	if ttl <= 0 || ttl > MaxTokenTTL {
		return "", errors.Newf("--ttl: %s is not more than 0 and at most %s", ttl, MaxTokenTTL)
	}
	userJWT, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		return "", errors.Wrap(err, "creds: no user JWT")
	}
	kp, err := jwt.ParseDecoratedNKey(creds)
	if err != nil {
		return "", errors.Wrap(err, "creds: no user seed")
	}
	claims, err := jwt.DecodeUserClaims(userJWT)
	if err != nil {
		return "", errors.Wrap(err, "creds: not a user JWT")
	}
	if pub, err := kp.PublicKey(); err != nil || pub != claims.Subject {
		return "", errors.New("creds: the seed is not the key the JWT names")
	}
	claim, err := json.Marshal(tokenClaim{Audience: tokenAudience, IssuedAt: now.Unix(), Expires: now.Add(ttl).Unix()})
	if err != nil {
		return "", errors.Wrap(err, "token claim")
	}
	sig, err := kp.Sign(signedClaim(claim))
	if err != nil {
		return "", errors.Wrap(err, "sign token")
	}
	return strings.Join([]string{tokenPrefix, b64.EncodeToString([]byte(userJWT)), b64.EncodeToString(claim), b64.EncodeToString(sig)}, "."), nil
}

// verifier checks tokens against the key that signs the cluster's user
// JWTs. A JWT's signature is checked against the issuer the JWT itself
// names, so the issuer must be that key: an issuer_account naming the
// cluster's account proves nothing (anyone can write it and sign with a
// key of their own, posing as one of the account's signing keys).
type verifier struct {
	signer string
}

// newVerifier trusts the key that signed the web service's own
// credentials (a creds file's contents), which lockstep auth signs every
// identity's with.
func newVerifier(creds []byte) (*verifier, error) {
	userJWT, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		return nil, errors.Wrap(err, "web credentials: no user JWT")
	}
	claims, err := jwt.DecodeUserClaims(userJWT)
	if err != nil {
		return nil, errors.Wrap(err, "web credentials")
	}
	return &verifier{signer: claims.Issuer}, nil
}

// ErrBadToken: a token that does not check out. Why is in the message, for
// the log; the viewer is only told to sign in again.
var ErrBadToken = errors.New("sign-in token refused")

// Verify checks a token and returns who it names.
func (v *verifier) Verify(token string, now time.Time) (Identity, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] != tokenPrefix {
		return Identity{}, errors.Mark(errors.New("not a Lockstep sign-in token"), ErrBadToken)
	}
	var raw [3][]byte
	for i, p := range parts[1:] {
		b, err := b64.DecodeString(p)
		if err != nil {
			return Identity{}, errors.Mark(errors.Wrap(err, "token encoding"), ErrBadToken)
		}
		raw[i] = b
	}
	// DecodeUserClaims checks the JWT's signature by its issuer.
	claims, err := jwt.DecodeUserClaims(string(raw[0]))
	if err != nil {
		return Identity{}, errors.Mark(errors.Wrap(err, "token JWT"), ErrBadToken)
	}
	switch {
	case claims.Issuer != v.signer || (claims.IssuerAccount != "" && claims.IssuerAccount != v.signer):
		return Identity{}, errors.Mark(errors.New("token JWT: not signed by this cluster's account"), ErrBadToken)
	case claims.Expires != 0 && now.Unix() >= claims.Expires:
		return Identity{}, errors.Mark(errors.New("token JWT: expired"), ErrBadToken)
	}
	user, err := nkeys.FromPublicKey(claims.Subject)
	if err != nil {
		return Identity{}, errors.Mark(errors.Wrap(err, "token JWT subject"), ErrBadToken)
	}
	if err := user.Verify(signedClaim(raw[1]), raw[2]); err != nil {
		return Identity{}, errors.Mark(errors.New("token signature: not made by the JWT's key"), ErrBadToken)
	}
	var c tokenClaim
	if err := json.Unmarshal(raw[1], &c); err != nil {
		return Identity{}, errors.Mark(errors.Wrap(err, "token claim"), ErrBadToken)
	}
	switch {
	case c.Audience != tokenAudience:
		return Identity{}, errors.Mark(errors.Newf("token audience %q", c.Audience), ErrBadToken)
	case now.Unix() >= c.Expires:
		return Identity{}, errors.Mark(errors.New("token expired"), ErrBadToken)
	case c.IssuedAt < 0 || c.Expires <= c.IssuedAt:
		// Checked before the lifetime: exp − iat of a negative iat can
		// overflow into a lifetime that passes.
		return Identity{}, errors.Mark(errors.New("token times out of order"), ErrBadToken)
	case c.Expires-c.IssuedAt > int64(MaxTokenTTL/time.Second):
		return Identity{}, errors.Mark(errors.New("token lifetime beyond the maximum"), ErrBadToken)
	case c.IssuedAt > now.Add(tokenSkew).Unix():
		// Issued "in the future", a token would live its whole lifetime
		// from then: valid far longer than the maximum. Said apart, as a
		// clock out of step shows itself here.
		return Identity{}, errors.Mark(errors.Newf("token issued %s in the future (beyond %s of clock skew)", time.Unix(c.IssuedAt, 0).Sub(now).Round(time.Second), tokenSkew), ErrBadToken)
	}
	id := Identity{Name: claims.Name, Expires: time.Unix(c.Expires, 0)}
	if claims.Expires != 0 && claims.Expires < c.Expires {
		id.Expires = time.Unix(claims.Expires, 0) // the creds end first
	}
	for _, tag := range claims.Tags {
		if r, ok := strings.CutPrefix(tag, "role:"); ok {
			id.Role = r
		}
	}
	if id.Name == "" || id.Role == "" {
		return Identity{}, errors.Mark(errors.New("token JWT names no identity or role"), ErrBadToken)
	}
	// People only: a node's or a service's creds sign in as no one, even
	// under a name a user has (the bus keeps their subjects apart too).
	who := auth.Identity{Name: id.Name, Role: auth.Role(id.Role)}
	if !who.Role.IsPerson() {
		return Identity{}, errors.Mark(errors.Newf("token of a %s's creds: only people sign in", id.Role), ErrBadToken)
	}
	if err := who.Validate(); err != nil {
		return Identity{}, errors.Mark(errors.Wrap(err, "token"), ErrBadToken)
	}
	return id, nil
}

// csrfFor is the anti-forgery value of a session: a hash of its token,
// which a page on another site cannot read (the cookie is HttpOnly and
// SameSite), so it cannot compute this either.
func csrfFor(token string) string {
	sum := sha256.Sum256([]byte("lockstep-web-csrf\x00" + token))
	return b64.EncodeToString(sum[:])
}
