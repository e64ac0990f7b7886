package embedded

import (
	"net/url"
	"time"

	"github.com/cockroachdb/errors"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
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
}

// Etcd is a running embedded etcd member.
type Etcd struct {
	e *embed.Etcd
}

// StartEtcd starts etcd and waits until it serves.
func StartEtcd(cfg EtcdConfig) (*Etcd, error) {
	client, err := url.Parse("http://" + cfg.Listen)
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
	return &Etcd{e: e}, nil
}

// Endpoint is the client URL (with the real port when 0 was asked for).
func (e *Etcd) Endpoint() string {
	return "http://" + e.e.Clients[0].Addr().String()
}

// Close stops etcd.
func (e *Etcd) Close() { e.e.Close() }
