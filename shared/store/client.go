package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// DefaultKeepAlive is how often a client pings each etcd connection that
// has been quiet. It is etcd's default --grpc-keepalive-min-time: a server
// drops a client that pings more often than that.
const DefaultKeepAlive = 5 * time.Second

// Connect dials etcd (comma-separated endpoints allowed) with the default
// keep-alive and checks that it answers.
func Connect(ctx context.Context, endpoints string) (*clientv3.Client, error) {
	return ConnectKeepAlive(ctx, endpoints, DefaultKeepAlive)
}

// ConnectKeepAlive is Connect with the keep-alive interval given. The
// pings are what notice a member that is frozen (a hung VM, a stalled
// disk) rather than gone: its TCP connections stay open, and without them
// every request, watch and lease keep-alive sent to it would hang until it
// came back. With them the connection is dropped after keepAlive plus a
// second of silence, and the client carries on through the other members.
func ConnectKeepAlive(ctx context.Context, endpoints string, keepAlive time.Duration) (*clientv3.Client, error) {
	eps := strings.Split(endpoints, ",")
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            eps,
		DialTimeout:          10 * time.Second,
		DialKeepAliveTime:    keepAlive,
		DialKeepAliveTimeout: time.Second,
		// Ping only connections with requests or streams in flight (those
		// are what hang on a frozen member). etcd counts pings on idle
		// connections as abuse and sends GOAWAY, after which gRPC doubles
		// the interval for good: seen in compose, the pings were too slow
		// to matter by the time a member froze.
		PermitWithoutStream: false,
		Logger:              zap.NewNop(),
	})
	if err != nil {
		return nil, errors.Wrapf(err, "connect to etcd at %s", endpoints)
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := cli.Get(cctx, Prefix+"ping"); err != nil {
		_ = cli.Close()
		return nil, errors.Wrapf(err, "etcd at %s does not answer", endpoints)
	}
	return cli, nil
}

// GetJSON reads one key into v; found is false when the key is absent.
func GetJSON(ctx context.Context, kv clientv3.KV, key string, v any) (found bool, modRev int64, err error) {
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return false, 0, errors.Wrapf(err, "get %s", key)
	}
	if len(resp.Kvs) == 0 {
		return false, 0, nil
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, v); err != nil {
		return true, 0, errors.Wrapf(err, "decode %s", key)
	}
	return true, resp.Kvs[0].ModRevision, nil
}

// MustJSON encodes v for a Put; it panics only on types that cannot be
// encoded, which is a programming error for the domain types it serves.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.AssertionFailedf("encode %T: %v", v, err))
	}
	return string(b)
}
