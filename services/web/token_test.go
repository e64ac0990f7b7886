package web

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// credsOf issues id's creds file contents from a.
func credsOf(t *testing.T, a *auth.Authority, id auth.Identity, ttl time.Duration) []byte {
	t.Helper()
	c, err := a.Creds(id, ttl, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newAuthority(t *testing.T) *auth.Authority {
	t.Helper()
	a, err := auth.NewAuthority()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestTokenNamesTheCredsIdentity(t *testing.T) {
	a := newAuthority(t)
	v, err := newVerifier(credsOf(t, a, auth.Identity{Name: "admin", Role: auth.RoleAdmin}, 0))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, id := range []auth.Identity{{Name: "alice", Role: auth.RoleUser}, {Name: "ops", Role: auth.RoleOperator}} {
		token, err := IssueToken(credsOf(t, a, id, 0), time.Hour, now)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Verify(token, now.Add(time.Minute))
		want := Identity{Name: id.Name, Role: string(id.Role), Expires: time.Unix(now.Add(time.Hour).Unix(), 0)}
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v", id.Name, got, err)
		}
	}
}

func TestTokenRefused(t *testing.T) {
	a, other := newAuthority(t), newAuthority(t)
	v, err := newVerifier(credsOf(t, a, auth.Identity{Name: "admin", Role: auth.RoleAdmin}, 0))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	alice := credsOf(t, a, auth.Identity{Name: "alice", Role: auth.RoleUser}, 0)
	good, err := IssueToken(alice, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	// A claim rewritten to last longer no longer matches its signature.
	longer := b64.EncodeToString([]byte(`{"aud":"lockstep-web","iat":0,"exp":99999999999}`))
	// Alice's JWT with a claim signed by another user's key.
	bob, err := IssueToken(credsOf(t, a, auth.Identity{Name: "bob", Role: auth.RoleUser}, 0), time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	bobParts := strings.Split(bob, ".")
	foreign, err := IssueToken(credsOf(t, other, auth.Identity{Name: "alice", Role: auth.RoleUser}, 0), time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	expiredCreds, err := IssueToken(credsOf(t, a, auth.Identity{Name: "carol", Role: auth.RoleUser}, time.Minute), time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	// Issued "a year from now" (a holder of the creds can sign any
	// claim): valid a year and a day if the issue time were believed.
	ahead, err := IssueToken(alice, time.Hour, now.Add(365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	forged := selfSigned(t, v.signer)
	// Alice signs, with her own key, a claim whose lifetime overflows:
	// exp − iat wraps to −1.
	wrapped := withClaim(t, alice, `{"aud":"lockstep-web","iat":-9223372036854775808,"exp":9223372036854775807}`)
	// A NATS server may name any nonce, which the client signs as it is:
	// a server that named a claim holds its bare signature.
	nonce := fmt.Sprintf(`{"aud":"lockstep-web","iat":%d,"exp":%d}`, now.Unix(), now.Add(time.Hour).Unix())
	nonceSigned := bareSigned(t, alice, nonce)
	// A node named like a user signs in with its creds.
	nodeToken, err := IssueToken(credsOf(t, a, auth.Identity{Name: "alice", Role: auth.RoleNode}, 0), time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		token string
		at    time.Time
	}{
		"self-signed, naming the cluster's account": {forged, now},
		"empty":                          {"", now},
		"garbage":                        {"lst2.a.b.c", now},
		"other prefix":                   {"lst0." + strings.Join(parts[1:], "."), now},
		"expired":                        {good, now.Add(2 * time.Hour)},
		"claim rewritten":                {strings.Join([]string{parts[0], parts[1], longer, parts[3]}, "."), now},
		"claim signed by another key":    {strings.Join([]string{parts[0], parts[1], bobParts[2], bobParts[3]}, "."), now},
		"another cluster's account":      {foreign, now},
		"creds expired though token not": {expiredCreds, now.Add(2 * time.Minute)},
		"signature not base64":           {strings.Join([]string{parts[0], parts[1], parts[2], "!!"}, "."), now},
		"issued a year ahead":            {ahead, now},
		"lifetime overflowing":           {wrapped, now},
		"a node's creds":                 {nodeToken, now},
		"a claim signed as a nonce":      {nonceSigned, now},
		"jwt not a jwt":                  {strings.Join([]string{parts[0], base64.RawURLEncoding.EncodeToString([]byte("x.y.z")), parts[2], parts[3]}, "."), now},
	}
	for name, c := range cases {
		if id, err := v.Verify(c.token, c.at); !errors.Is(err, ErrBadToken) {
			t.Errorf("%s: accepted as %+v (%v)", name, id, err)
		}
	}
}

func TestIssueTokenChecksItsInput(t *testing.T) {
	a := newAuthority(t)
	creds := credsOf(t, a, auth.Identity{Name: "alice", Role: auth.RoleUser}, 0)
	for name, c := range map[string]struct {
		creds []byte
		ttl   time.Duration
	}{
		"no ttl":       {creds, 0},
		"ttl too long": {creds, MaxTokenTTL + time.Second},
		"not creds":    {[]byte("hello"), time.Hour},
	} {
		if _, err := IssueToken(c.creds, c.ttl, time.Now()); err == nil {
			t.Errorf("%s: issued", name)
		}
	}
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr          string
		authOn, allow bool
		ok            bool
	}{
		{"127.0.0.1:8080", false, false, true},
		{"[::1]:8080", false, false, true},
		{"localhost:0", false, false, true},
		{"", false, false, true},
		{"0.0.0.0:8080", false, false, false},
		{":8080", false, false, false},
		{"10.0.0.5:8080", false, false, false},
		{"10.0.0.5:8080", true, false, true},
		{":8080", false, true, true},
		{"nonsense", true, true, false},
	} {
		if err := CheckListen(c.addr, c.authOn, c.allow); (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, auth %v, allow %v) = %v", c.addr, c.authOn, c.allow, err)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/queue": "/queue", "": "/fabric", "//evil.example": "/fabric", "https://evil.example": "/fabric", "/\\evil": "/fabric",
		"/\t/evil.example": "/fabric", "/\n/evil.example": "/fabric", "/x\x7f": "/fabric", "/queue?state=running": "/queue?state=running"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// selfSigned is an admin token whose user JWT is signed by a key of the
// forger's own that claims to sign for account (as an account's signing
// keys do): the JWT's signature checks out against its own issuer, so
// only the issuer tells it apart.
func selfSigned(t *testing.T, account string) string {
	t.Helper()
	signer, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	claims := jwt.NewUserClaims(pub)
	claims.Name, claims.IssuerAccount = "mallory", account
	claims.Tags.Add("role:admin")
	userJWT, err := claims.Encode(signer)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(userJWT, seed)
	if err != nil {
		t.Fatal(err)
	}
	token, err := IssueToken(creds, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// withClaim is a token of creds whose claim is the one given, signed with
// the creds' own key (as their holder can sign any claim).
func withClaim(t *testing.T, creds []byte, claim string) string {
	t.Helper()
	return tokenSigning(t, creds, claim, signedClaim([]byte(claim)))
}

// bareSigned is a token whose signature is over the claim alone, as the
// NATS client signs a server's nonce.
func bareSigned(t *testing.T, creds []byte, claim string) string {
	t.Helper()
	return tokenSigning(t, creds, claim, []byte(claim))
}

// tokenSigning is a token of creds carrying claim, whose signature, made
// with the creds' key, is over signed.
func tokenSigning(t *testing.T, creds []byte, claim string, signed []byte) string {
	t.Helper()
	userJWT, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := jwt.ParseDecoratedNKey(creds)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := kp.Sign(signed)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{tokenPrefix, b64.EncodeToString([]byte(userJWT)), b64.EncodeToString([]byte(claim)), b64.EncodeToString(sig)}, ".")
}
