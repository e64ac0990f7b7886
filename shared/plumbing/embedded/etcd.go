package embedded

import (
	"net/url"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// EtcdConfig configures an embedded single-member etcd.
type EtcdConfig struct {
	// Listen is the client HOST:PORT; port 0 picks a free port.
	Listen string
	// Dir holds etcd's data.
	Dir string
	// NoFsync trades durability for speed (tests only; never for dev or
	// benchmarks).
	NoFsync bool
	// TLS, when set, serves clients over TLS with this server certificate
	// and requires a client certificate signed by its CA (etcd then takes
	// the user name from the certificate's common name).
	TLS *auth.TLSFiles
}

// Etcd is a running embedded etcd member.
type Etcd struct {
	e   *embed.Etcd
	tls bool
}

// StartEtcd starts etcd and waits until it serves.
func StartEtcd(cfg EtcdConfig) (*Etcd, error) {
	scheme := "http://"
	if cfg.TLS != nil {
		scheme = "https://"
	}
	client, err := url.Parse(scheme + cfg.Listen)
	if err != nil {
		return nil, errors.Wrapf(err, "etcd listen address %q", cfg.Listen)
	}
	// The peer listener is loopback-only with a free port: one member
	// never talks to peers, but etcd insists on a peer URL.
	peer, _ := url.Parse("http://127.0.0.1:0")

	ec := embed.NewConfig()
	ec.Name = "lockstep"
	ec.Dir = cfg.Dir
	ec.ListenClientUrls = []url.URL{*client}
	ec.AdvertiseClientUrls = []url.URL{*client}
	ec.ListenPeerUrls = []url.URL{*peer}
	ec.AdvertisePeerUrls = []url.URL{*peer}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.LogLevel = "error"
	// etcd logs its own shutdown as errors; Lockstep reports what matters.
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	ec.UnsafeNoFsync = cfg.NoFsync
	if cfg.TLS != nil {
		ec.ClientTLSInfo = transport.TLSInfo{
			CertFile: cfg.TLS.Cert, KeyFile: cfg.TLS.Key, TrustedCAFile: cfg.TLS.CA, ClientCertAuth: true,
		}
	}
	// A gang's reservation is one transaction, larger than etcd's default
	// allows for gangs past a dozen nodes.
	ec.MaxTxnOps = store.MaxTxnOps
	// Keep history bounded: the watchers only need recent revisions.
	ec.AutoCompactionMode = "periodic"
	ec.AutoCompactionRetention = "1h"

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, errors.Wrap(err, "start etcd")
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("etcd not ready after 60s")
	case err := <-e.Err():
		e.Close()
		return nil, errors.Wrap(err, "etcd failed to start")
	}
	return &Etcd{e: e, tls: cfg.TLS != nil}, nil
}

// Endpoint is the client URL (with the real port when 0 was asked for).
func (e *Etcd) Endpoint() string {
	if e.tls {
		return "https://" + e.e.Clients[0].Addr().String()
	}
	return "http://" + e.e.Clients[0].Addr().String()
}

// Close stops etcd.
func (e *Etcd) Close() { e.e.Close() }
