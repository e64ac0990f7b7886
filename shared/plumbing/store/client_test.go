package store

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// What a member that did not answer in time looks like to the caller,
// wrapped as the services wrap it, is "unanswered"; a refusal is not.
func TestUnansweredIsAMemberThatDidNotAnswer(t *testing.T) {
	hang := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		<-ctx.Done()
		return ctx.Err()
	}
	err := attemptTimeout(10*time.Millisecond, nil)(context.Background(), "/etcdserverpb.KV/Txn", nil, nil, nil, hang)
	if !Unanswered(errors.Wrap(err, "reserve job j")) {
		t.Errorf("Unanswered(%v) = false", err)
	}
	for _, err := range []error{nil, rpctypes.ErrPermissionDenied, status.Error(codes.InvalidArgument, "bad"), context.Canceled} {
		if Unanswered(err) {
			t.Errorf("Unanswered(%v) = true", err)
		}
	}
}
