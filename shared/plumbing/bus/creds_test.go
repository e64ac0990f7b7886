package bus

import (
	"os"
	"path/filepath"
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
