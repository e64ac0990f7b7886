// Package config holds what every service process needs to start: where
// NATS and etcd are, how to log, and the timing knobs shared across
// services. Each service embeds Base in its own Config.
package config

import (
	"context"
	"log/slog"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry/otelsdk"
)

// Base is the configuration common to every service.
type Base struct {
	NATSURL string
	Etcd    string
	// Credentials are what the process connects with (zero: anonymous,
	// plain text).
	connection.Credentials
	// StreamReplicas is the JetStream replication factor (3 on a cluster).
	StreamReplicas int
	// HistoryRetention is how long the accounting history stream keeps a
	// job's events (bus.StreamOptions.HistoryAge).
	HistoryRetention time.Duration
	// ReadersPerStream caps the consumers of each stream people read
	// (bus.StreamOptions.Readers).
	ReadersPerStream int
	// EventsMaxBytes and HistoryMaxBytes cap the events and history
	// streams on disk (bus.StreamOptions; 0: no cap).
	EventsMaxBytes, HistoryMaxBytes int64
	// EtcdRequestTimeout bounds one attempt at an etcd request (see
	// store.ConnectTimeout); 0 means store.DefaultRequestTimeout.
	EtcdRequestTimeout time.Duration
	// Instance names this replica in logs and NATS connection names.
	Instance string
	Log      *slog.Logger
	// MetricsAddr is where /metrics, /healthz and /readyz are served ("" for
	// nowhere); see StartTelemetry.
	MetricsAddr string
	// Telemetry and Health are the process's tracing/metrics and readiness
	// (set by StartTelemetry, or by devcluster for all its services); nil
	// means no-op, as in most tests.
	Telemetry *otelsdk.Telemetry
	Health    *telemetry.Health
	// Now is the clock a service reads its times from (tests set a fake
	// one); nil means time.Now, which Start fills in.
	Now func() time.Time
}

// Register adds a service's own common flags to fs; the connection flags
// are RegisterConnection's (global in the CLI), read by
// ResolveConnection once parsed.
func (b *Base) Register(fs *pflag.FlagSet) {
	fs.DurationVar(&b.EtcdRequestTimeout, "etcd-request-timeout", store.DefaultRequestTimeout,
		"give up on an etcd member that has not answered a request in this long (a frozen member): reads are retried on another member, writes by the caller")
	fs.IntVar(&b.StreamReplicas, "stream-replicas", 1, "JetStream stream replicas (3 on a NATS cluster)")
	fs.DurationVar(&b.HistoryRetention, "history-retention", bus.DefaultHistoryAge,
		"how long lockstep history and usage can look back (the LOCKSTEP_HISTORY stream's max age)")
	fs.Var(byteSize{&b.EventsMaxBytes}, "events-max-bytes",
		"cap the LOCKSTEP_EVENTS stream on disk, its oldest events dropped first (binary units: 20GiB, 20GB and 20g are alike; 0: no cap, events kept 7 days)")
	fs.Var(byteSize{&b.HistoryMaxBytes}, "history-max-bytes",
		"cap the LOCKSTEP_HISTORY stream on disk, its oldest events dropped first, which shortens what lockstep history and usage can look back (binary units, e.g. 100GiB; 0: no cap, only --history-retention)")
	fs.IntVar(&b.ReadersPerStream, "readers-per-stream", bus.ReadersPerStream,
		"readers one stream of events, logs, history or job records takes at once: each running submit --wait, sbatch --wait, logs -f or dashboard stream is one, about 50 KiB of NATS server memory (never more than the NATS account's max_consumers; -1 leaves it to the server)")
	fs.StringVar(&b.Instance, "instance", "", "name of this replica (default: host name)")
	fs.StringVar(&b.MetricsAddr, "metrics-addr", b.MetricsAddr, "serve /metrics, /healthz and /readyz on this address (\"\" to disable)")
}

// ResolveConnection fills NATSURL, Etcd and Credentials from the
// connection flags, the environment and the config file
// (ConnFlags.Resolve).
func (b *Base) ResolveConnection(conn *connection.ConnFlags, getenv func(string) string) error {
	c, err := conn.Resolve(getenv)
	if err != nil {
		return err
	}
	b.NATSURL, b.Etcd, b.Credentials = c.NATS, c.Etcd, c.Credentials
	return nil
}

// Validate checks the common fields; a problem is marked
// errs.ErrBadSetting.
func (b *Base) Validate() error { return errs.MarkBadSetting(b.check()) }

func (b *Base) check() error {
	switch {
	case b.NATSURL == "":
		return errors.New("--nats: a NATS URL is required")
	case b.Etcd == "":
		return errors.New("--etcd: an etcd endpoint is required")
	case b.EtcdRequestTimeout != 0 && (b.EtcdRequestTimeout < 500*time.Millisecond || b.EtcdRequestTimeout > time.Minute):
		return errors.Newf("--etcd-request-timeout: %s is not between 500ms and 1m", b.EtcdRequestTimeout)
	case b.StreamReplicas < 1 || b.StreamReplicas > 5:
		return errors.Newf("--stream-replicas: %d is not between 1 and 5", b.StreamReplicas)
	case b.HistoryRetention < 0:
		return errors.Newf("--history-retention: %s is negative", b.HistoryRetention)
	case b.EventsMaxBytes != 0 && b.EventsMaxBytes < minStreamBytes:
		return errors.Newf("--events-max-bytes: %d bytes is below the 1MiB minimum", b.EventsMaxBytes)
	case b.HistoryMaxBytes != 0 && b.HistoryMaxBytes < minStreamBytes:
		return errors.Newf("--history-max-bytes: %d bytes is below the 1MiB minimum", b.HistoryMaxBytes)
	case b.ReadersPerStream != 0 && b.ReadersPerStream != bus.ServerReaders &&
		(b.ReadersPerStream < minReaders || b.ReadersPerStream > maxReaders):
		return errors.Newf("--readers-per-stream: %d is neither -1 nor between %d and %d", b.ReadersPerStream, minReaders, maxReaders)
	}
	return nil
}

// minStreamBytes is the smallest cap --events-max-bytes and
// --history-max-bytes take: a stream capped below one message's size
// would keep nothing.
const minStreamBytes = 1 << 20

// The bounds of --readers-per-stream: room for every service's watches
// and a few readers at the low end; at the high end 50 GiB of the NATS
// server's memory, past any server's size.
const (
	minReaders = 100
	maxReaders = 1_000_000
)

// Logger returns the configured logger, or the default one, adding trace
// and span IDs (and the job, see telemetry.WithJob) to lines logged with a
// context.
func (b *Base) Logger() *slog.Logger {
	if b.Log != nil {
		return telemetry.Logger(b.Log)
	}
	return telemetry.Logger(slog.Default())
}

// Instruments returns this replica's tracer and metric instruments for a
// service (no-ops when Telemetry is nil).
func (b *Base) Instruments(service string) *telemetry.Service {
	return b.Telemetry.Service(service, b.Instance)
}

// Clients connects to NATS (declaring the streams, when streams is set
// and the identity may: declaresStreams) and etcd. The bus traces with the
// service's tracer and counts on its meter.
func (b *Base) Clients(ctx context.Context, service string, streams bool) (*bus.Bus, *clientv3.Client, error) {
	name := "lockstep-" + service
	if b.Instance != "" {
		name += "-" + b.Instance
	}
	ins := b.Instruments(service)
	opts := append(b.BusOptions(), bus.WithTracerProvider(ins.TracerProvider), bus.WithMeter(ins.Meter))
	bs, err := bus.Connect(ctx, b.NATSURL, name, opts...)
	if err != nil {
		return nil, nil, err
	}
	if streams {
		declare, err := b.declaresStreams()
		if err == nil && declare {
			err = bs.EnsureStreams(ctx, bus.StreamOptions{Replicas: b.StreamReplicas, HistoryAge: b.HistoryRetention, Readers: b.ReadersPerStream,
				EventsMaxBytes: b.EventsMaxBytes, HistoryMaxBytes: b.HistoryMaxBytes})
		}
		if err != nil {
			bs.Close()
			return nil, nil, err
		}
	}
	timeout := b.EtcdRequestTimeout
	if timeout == 0 {
		timeout = store.DefaultRequestTimeout
	}
	cli, err := store.ConnectTimeout(ctx, b.Etcd, timeout, store.WithCredentials(b.Credentials), store.WithLog(b.Logger()))
	if err != nil {
		bs.Close()
		return nil, nil, err
	}
	return bs, cli, nil
}

// declaresStreams says whether this process declares the streams. Without
// credentials every process does, as before auth. A node's identity may
// not (least privilege: declaring a stream can change its subjects and
// retention), so an agent with node creds uses the streams the services
// declared.
func (b *Base) declaresStreams() (bool, error) {
	if b.Creds == "" {
		return true, nil
	}
	id, err := bus.CredsIdentity(b.Creds)
	if err != nil {
		return false, err
	}
	return id.Role != auth.RoleNode, nil
}

// Durations shared by several services.
const (
	// ReconcileInterval is how often services re-check etcd against the job
	// records, catching anything a missed watch event left behind.
	ReconcileInterval = 5 * time.Second
)

// ErrSimulatedCrash is the cancellation cause with which an in-process
// cluster (devcluster, fault tests) stops a service as if it crashed: the
// service skips its goodbyes (revoking its lease, resigning leadership), so
// the rest of the system sees what it would see after a kill -9.
var ErrSimulatedCrash = errors.New("simulated crash")

// Crashed reports whether ctx was cancelled to simulate a crash.
func Crashed(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrSimulatedCrash) }
