package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A session ends when etcd says its lease is gone (revoked here by someone
// else, as an operator or a lease expiry would), and says why.
func TestSessionEndsWhenEtcdDropsItsLease(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	sess, err := store.OpenSession(ctx, env.Etcd, 2*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if sess.Lost() != nil || sess.Context().Err() != nil {
		t.Fatalf("a new session is already over: %v", sess.Lost())
	}
	if _, err := env.Etcd.Revoke(ctx, sess.Lease()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the session outlived its revoked lease")
	}
	if sess.Lost() == nil {
		t.Error("Lost() = nil after the lease was revoked")
	}
}

// Close gives the lease back at once; a closed session is not "lost".
func TestSessionCloseRevokesItsLease(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	sess, err := store.OpenSession(ctx, env.Etcd, 10*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// It outlives a few of the client's renewal rounds (TTL/3 each).
	time.Sleep(4 * time.Second)
	if err := sess.Lost(); err != nil {
		t.Fatalf("lost a healthy session: %v", err)
	}
	sess.Close()
	if sess.Context().Err() == nil {
		t.Error("Close left the session's context running")
	}
	if err := sess.Lost(); err != nil {
		t.Errorf("Lost() = %v after Close, want nil", err)
	}
	resp, err := env.Etcd.TimeToLive(ctx, sess.Lease())
	if err != nil {
		t.Fatal(errors.Wrap(err, "time to live"))
	}
	if resp.TTL > 0 {
		t.Errorf("lease still has %ds to live after Close", resp.TTL)
	}
}
