package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
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
	// History is how long etcd keeps the revisions a write supersedes
	// (0: EtcdHistory).
	History time.Duration
}

// etcd keeps every revision of every key until it is compacted, and stops
// taking writes (alarm NOSPACE) once its database reaches its quota. A
// job leaves about 10 KB of history (its reservation, the launch
// barrier's rewrite, progress and release: docs/operations.md). Without
// compaction etcd's default 2 GiB is full after some 200,000 jobs; with
// an hour of history (this package's setting until 2026-12-07), at a
// sustained 55 jobs/s. Kubernetes' API server compacts every 5 minutes;
// so does etcd here, keeping between EtcdHistory and twice that.
// Watchers that fall further behind resynchronise from a fresh read
// (store.Cache does). At 800 jobs/s ten minutes is about 5 GB: the quota
// is etcd's recommended largest.
const (
	// EtcdHistory is how long etcd keeps superseded revisions (its
	// --auto-compaction-mode=periodic --auto-compaction-retention).
	EtcdHistory = 5 * time.Minute
	// EtcdQuotaBytes is etcd's database quota (--quota-backend-bytes).
	EtcdQuotaBytes = 8 << 30
)

// Etcd is a running embedded etcd member.
type Etcd struct {
	e   *embed.Etcd
	tls bool
}

// StartEtcd starts etcd and waits until it serves.
func StartEtcd(cfg EtcdConfig) (*Etcd, error) {
	if cfg.Dir == "" {
		// etcd would otherwise write into the working folder.
		return nil, errors.New("etcd's data folder: none given")
	}
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

	// The client URL serves gRPC alone, natively; etcd's HTTP endpoints
	// (/health, /version, /metrics, none of which Lockstep uses) get a unix
	// socket of their own. Sharing one URL, etcd serves gRPC over TLS
	// through net/http's HTTP/2 server and grpc-go's ServeHTTP handler, the
	// slower of grpc-go's two transports (docs/benchmarks.md: etcd's side
	// of `lockstep dev`). A socket, not a second port 0: etcd's listeners
	// come back in no order, and the two would be told apart by nothing but
	// their kind. (Served natively, gRPC stops gracefully at Close, as it
	// always did without TLS: a client still watching holds Close up to
	// etcd's request timeout.)
	httpOnly, err := httpSocketURL(cfg.Dir, client.Scheme)
	if err != nil {
		return nil, err
	}
	// etcd creates its data folder only after it listens.
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, errors.Wrapf(err, "etcd's data folder %q", cfg.Dir)
	}

	ec := embed.NewConfig()
	ec.Name = "lockstep"
	ec.Dir = cfg.Dir
	ec.ListenClientUrls = []url.URL{*client}
	ec.ListenClientHttpUrls = []url.URL{httpOnly}
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
	history := cfg.History
	if history <= 0 {
		history = EtcdHistory
	}
	ec.AutoCompactionMode = "periodic"
	ec.AutoCompactionRetention = history.String()
	ec.QuotaBackendBytes = EtcdQuotaBytes

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, errors.Wrapf(err, "start etcd (its HTTP endpoints on %s)", httpOnly.Path)
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

// Endpoint is the client URL (with the real port when 0 was asked for):
// the one TCP listener, etcd's HTTP endpoints being on a unix socket.
func (e *Etcd) Endpoint() string {
	var addr string
	for _, l := range e.e.Clients {
		if l.Addr().Network() == "tcp" {
			addr = l.Addr().String()
		}
	}
	if e.tls {
		return "https://" + addr
	}
	return "http://" + addr
}

// httpSocketURL names the unix socket for etcd's HTTP endpoints: in the
// data folder, so that one left by a killed process is replaced by the next
// start in that folder (etcd removes a stale socket before it listens) and
// goes with the folder, not left behind in the temporary folder. A socket's
// path may have at most maxSocketPath bytes; past that it goes in the
// temporary folder under a name that the data folder's path decides, so a
// later start in the same folder still finds and replaces it.
func httpSocketURL(dir, clientScheme string) (url.URL, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return url.URL{}, errors.Wrapf(err, "etcd's data folder %q", dir)
	}
	path := filepath.Join(abs, httpSocketName)
	if len(path) > maxSocketPath {
		sum := sha256.Sum256([]byte(abs))
		path = filepath.Join(os.TempDir(), "lockstep-etcd-"+hex.EncodeToString(sum[:8])+".sock")
	}
	scheme := "unix"
	if clientScheme == "https" {
		scheme = "unixs"
	}
	return url.URL{Scheme: scheme, Path: path}, nil
}

// httpSocketName is the socket's name in etcd's data folder.
const httpSocketName = "http.sock"

// maxSocketPath is the longest path a unix socket may have on Linux: the
// 108 bytes of sun_path, less the terminating NUL.
const maxSocketPath = 107

// Close stops etcd.
func (e *Etcd) Close() { e.e.Close() }
