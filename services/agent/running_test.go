package agent

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A running key is written only while the assignment it is for still
// exists (the one seen, by CreateRevision): gang looks for a job's
// running keys only on the nodes of its latest reservation, so a key
// written for an assignment already released could go unseen.
func TestRunningKeyOnlyWhileAssigned(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	lease := env.Lease(t, time.Minute)
	r := &runningKeys{etcd: env.Etcd, node: "n1", log: slog.New(slog.DiscardHandler)}
	as := domain.Assignment{JobID: "job", Attempt: 1, Node: "n1", Epoch: int64(lease)}
	put, err := env.Etcd.Put(ctx, store.AssignKey("n1", "job"), store.MustJSON(as))
	if err != nil {
		t.Fatal(err)
	}
	exists := func() bool { return env.Held(t, store.RunningKey("n1", "job")) > 0 }
	rev, err := r.hold(ctx, as, put.Header.Revision)
	if err != nil || rev == 0 || !exists() {
		t.Fatalf("hold while assigned: rev %d, err %v, key written %v", rev, err, exists())
	}
	r.drop(ctx, as, rev)
	if exists() {
		t.Fatal("drop left the key")
	}
	// Released, then assigned again (a later attempt): the assignment
	// seen first is gone.
	if _, err := env.Etcd.Delete(ctx, store.AssignKey("n1", "job")); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Etcd.Put(ctx, store.AssignKey("n1", "job"), store.MustJSON(as)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.hold(ctx, as, put.Header.Revision); !errors.Is(err, errAssignmentGone) || exists() {
		t.Fatalf("hold after the assignment was replaced: err %v, key written %v", err, exists())
	}
}
