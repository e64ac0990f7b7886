package bus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// The inbox a client uses is the one its creds allow: creds issued now
// allow the identity's own, and creds issued before a person's inbox
// carried the role (they allow _INBOX_<name>) keep working with theirs.
func TestReadCredsUsesTheInboxItsPermissionsAllow(t *testing.T) {
	dir := t.TempDir()
	a, err := auth.LoadOrCreateAuthority(filepath.Join(dir, "authority"))
	if err != nil {
		t.Fatal(err)
	}
	alice := auth.Identity{Name: "alice", Role: auth.RoleUser}
	issued := filepath.Join(dir, "alice.creds")
	if err := a.WriteCreds(issued, alice, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	legacy := writeLegacyCreds(t, dir, "alice", []string{"_INBOX_alice.>", "lockstep.v1.logs.alice.>"})
	none := writeLegacyCreds(t, dir, "bob", []string{"lockstep.v1.logs.bob.>"})
	for _, tc := range []struct{ path, want string }{
		{issued, "_INBOX_user:alice"},
		{legacy, "_INBOX_alice"},
		{none, "_INBOX_bob"}, // no role tag, no inbox allowed: the name's
	} {
		_, inbox, err := readCreds(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if inbox != tc.want {
			t.Errorf("%s: inbox %q, want %q", filepath.Base(tc.path), inbox, tc.want)
		}
	}
}

// writeLegacyCreds writes creds for name, allowed to subscribe to sub,
// signed by an account of their own (readCreds reads, it does not verify).
func writeLegacyCreds(t *testing.T, dir, name string, sub []string) string {
	t.Helper()
	account, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	userPub, _ := user.PublicKey()
	claims := jwt.NewUserClaims(userPub)
	claims.Name = name
	claims.Sub.Allow.Add(sub...)
	token, err := claims.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+"-legacy.creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readCreds reads the claims without verifying them (the server does), so
// it must read what the jwt library reads, and still refuse a JWT that is
// not a user's.
func TestReadCredsReadsWhatTheJWTLibraryReads(t *testing.T) {
	dir := t.TempDir()
	a, err := auth.LoadOrCreateAuthority(filepath.Join(dir, "authority"))
	if err != nil {
		t.Fatal(err)
	}
	ops := auth.Identity{Name: "ops", Role: auth.RoleOperator}
	path := filepath.Join(dir, "ops.creds")
	if err := a.WriteCreds(path, ops, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	id, _, err := readCreds(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	token, _ := jwt.ParseDecoratedJWT(raw)
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	if id != ops || claims.Name != id.Name || !claims.Tags.Contains("role:"+string(id.Role)) {
		t.Errorf("read %+v; the jwt library reads name %q, tags %v", id, claims.Name, claims.Tags)
	}

	// An account's JWT in a creds file is not a user's.
	account, _ := nkeys.CreateAccount()
	operator, _ := nkeys.CreateOperator()
	accountPub, _ := account.PublicKey()
	accountToken, err := jwt.NewAccountClaims(accountPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	// (A file of one bare JWT is read as that JWT.)
	if _, _, err := readCreds(writeFile(t, dir, "account.creds", accountToken)); err == nil || !strings.Contains(err.Error(), "not a user JWT") {
		t.Errorf("an account JWT read as creds: %v", err)
	}
	if _, _, err := readCreds(writeFile(t, dir, "garbage.creds", "not.a-jwt")); err == nil {
		t.Error("a token of two parts read as creds")
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
