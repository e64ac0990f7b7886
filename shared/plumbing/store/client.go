package store

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// DefaultRequestTimeout is how long one attempt at an etcd request may
// take before the client gives up on the member it went to.
const DefaultRequestTimeout = 5 * time.Second

// keepAlive is how often the client pings busy connections: gRPC's
// minimum (it raises anything lower to 10 s), so pings alone notice a
// frozen etcd member only after 11 s. Request timeouts and LiveWatch's
// stall check do it sooner.
const keepAlive = 10 * time.Second

// Connect dials etcd (comma-separated endpoints allowed) with the default
// request timeout and checks that it answers.
func Connect(ctx context.Context, endpoints string, opts ...Option) (*clientv3.Client, error) {
	return ConnectTimeout(ctx, endpoints, DefaultRequestTimeout, opts...)
}

// Option adjusts how Connect reaches etcd.
type Option func(*connectOptions)

type connectOptions struct {
	tls transport.TLSInfo
	log *slog.Logger
}

// WithLog logs what the client decides on its own, such as leaving out a
// member that stopped answering. Without it, nothing is logged.
func WithLog(log *slog.Logger) Option {
	return func(o *connectOptions) { o.log = log }
}

// WithTLS connects over TLS, trusting the CA in caFile, and authenticates
// with the client certificate certFile/keyFile: etcd takes the user name
// from its common name. All "" means plain text, no certificate.
func WithTLS(caFile, certFile, keyFile string) Option {
	return func(o *connectOptions) {
		o.tls = transport.TLSInfo{TrustedCAFile: caFile, CertFile: certFile, KeyFile: keyFile}
	}
}

// WithCredentials presents the etcd half of c: its CA and client
// certificate.
func WithCredentials(c connection.Credentials) Option {
	return WithTLS(c.EtcdCA, c.EtcdCert, c.EtcdKey)
}

// tlsConfig is the client TLS configuration, nil for plain text.
func (o connectOptions) tlsConfig() (*tls.Config, error) {
	if o.tls.Empty() && o.tls.TrustedCAFile == "" {
		return nil, nil
	}
	if (o.tls.CertFile == "") != (o.tls.KeyFile == "") {
		return nil, errors.Newf("etcd client certificate %q and key %q: give both or neither", o.tls.CertFile, o.tls.KeyFile)
	}
	cfg, err := o.tls.ClientConfig()
	return cfg, errors.Wrap(err, "etcd TLS")
}

// ConnectTimeout is Connect with the request timeout given. A member that
// is frozen rather than gone (a hung VM, a stalled disk) keeps its TCP
// connections open and answers nothing: without a timeout every request
// sent to it would hang until it came back. With it, an attempt that gets
// no answer within requestTimeout fails as "unavailable", the client
// retries reads on the next member (it spreads requests over all of them)
// and returns writes to the caller, who retries them (every write that
// matters is a compare-and-set, so a retry is safe).
func ConnectTimeout(ctx context.Context, endpoints string, requestTimeout time.Duration, opts ...Option) (*clientv3.Client, error) {
	var o connectOptions
	for _, opt := range opts {
		opt(&o)
	}
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, errors.Wrapf(err, "connect to etcd at %s", endpoints)
	}
	eps := strings.Split(endpoints, ",")
	log := o.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	guard := newMemberGuard(eps, requestTimeout, log)
	cli, err := clientv3.New(clientv3.Config{
		// The client's own context carries its guard, so that whatever
		// holds the client (a watch) can tell the guard what it noticed.
		Context:              context.WithValue(context.Background(), guardKey{}, guard),
		Endpoints:            eps,
		DialTimeout:          10 * time.Second,
		DialKeepAliveTime:    keepAlive,
		DialKeepAliveTimeout: time.Second,
		// Ping only connections with requests or streams in flight: etcd
		// counts pings on idle connections as abuse (GOAWAY too_many_pings).
		PermitWithoutStream: false,
		DialOptions:         []grpc.DialOption{grpc.WithChainUnaryInterceptor(attemptTimeout(requestTimeout, guard))},
		Logger:              zap.NewNop(),
		TLS:                 tlsCfg,
	})
	if err != nil {
		return nil, errors.Wrapf(err, "connect to etcd at %s", endpoints)
	}
	go guard.run(cli)
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// An identity that may not read the ping key (a node) is still answered:
	// permission denied comes from a live, authenticating etcd.
	if _, err := cli.Get(cctx, Prefix+"ping"); err != nil && !errors.Is(err, rpctypes.ErrPermissionDenied) {
		_ = cli.Close()
		return nil, errors.Wrapf(err, "etcd at %s does not answer", endpoints)
	}
	return cli, nil
}

// attemptTimeout bounds each attempt of a unary etcd request. It runs
// inside the etcd client's retry interceptor, so a timeout of its own
// (not the caller's) is reported as codes.Unavailable: the client retries
// it on another member if the request is a read, and never if it is a
// write (which may have reached the member). The guard hears of each such
// timeout, to find the member and leave it out.
func attemptTimeout(d time.Duration, guard *memberGuard) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		actx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		err := invoker(actx, method, req, reply, cc, opts...)
		if err != nil && ctx.Err() == nil && actx.Err() != nil {
			guard.notice()
			return status.Errorf(codes.Unavailable, "etcd member did not answer %s within %s", method, d)
		}
		return err
	}
}

// Unanswered reports whether err is a member that did not answer in time
// or could not serve (codes.Unavailable: frozen, down, without a leader):
// the client sends the next attempt to the next member, so a write that
// is safe to repeat is worth trying again at once.
func Unanswered(err error) bool {
	if err == nil {
		return false
	}
	var se interface{ GRPCStatus() *status.Status }
	return errors.As(err, &se) && se.GRPCStatus().Code() == codes.Unavailable
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
	if err := codec.Decode(resp.Kvs[0].Value, v); err != nil {
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
