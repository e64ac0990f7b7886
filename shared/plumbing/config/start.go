package config

import (
	"context"
	"log/slog"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Settings is a service's Config as Start takes it: a struct that embeds
// Base (which provides every method). A service with settings of its own
// declares its own Validate, which calls Base.Validate, and its own
// Defaults.
type Settings interface {
	Validate() error
	// Defaults fills in the settings left zero.
	Defaults()
	common() *Base
}

func (b *Base) common() *Base { return b }

// Defaults fills in the clock (Now); Base's other zero fields mean their
// defaults where they are used (EtcdRequestTimeout in Clients). A service's
// own Defaults hides this one, so Start calls both.
func (b *Base) Defaults() { b.Now = clock.Or(b.Now) }

// Started is what a service's Run works with once Start has connected it.
type Started struct {
	// Log is the configured logger (Base.Logger) with the service's name.
	Log *slog.Logger
	// Tel is the service's tracer and instruments (Base.Instruments).
	Tel  *telemetry.Service
	Bus  *bus.Bus
	Etcd *clientv3.Client
	// Jobs is the jobs bucket; nil unless started WithJobs.
	Jobs *jobs.Store

	service string
	base    *Base
}

// StartOption configures Start.
type StartOption func(*startOptions)

type startOptions struct {
	jobs      bool
	noStreams bool
}

// WithJobs has Start bind the jobs bucket too (Started.Jobs).
func WithJobs() StartOption { return func(o *startOptions) { o.jobs = true } }

// WithoutStreams has Start declare no stream: the process only reads them
// (the dashboard), so its settings (--stream-replicas, --history-retention,
// the stream caps) never change the cluster's, and a dashboard started with defaults
// cannot cut the history the services keep.
func WithoutStreams() StartOption { return func(o *startOptions) { o.noStreams = true } }

// Start does what every service's Run begins with: it validates cfg (as
// given), fills in its defaults (Base's, then the service's), connects to
// NATS (declaring the streams, see Clients) and etcd, and with WithJobs
// binds the jobs bucket. Invalid settings come back as Validate says them;
// a failure to connect is wrapped with the service's name. Close the
// result when the service stops; call Ready once it serves.
func Start(ctx context.Context, service string, cfg Settings, opts ...StartOption) (*Started, error) {
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := cfg.common()
	b.Defaults()
	cfg.Defaults()
	st := &Started{Log: b.Logger().With("service", service), Tel: b.Instruments(service), service: service, base: b}
	var err error
	st.Bus, st.Etcd, err = b.Clients(ctx, service, !o.noStreams)
	if err != nil {
		return nil, errors.Wrap(err, service)
	}
	if o.jobs {
		if st.Jobs, err = jobs.Open(ctx, st.Bus.JS); err != nil {
			st.Close()
			return nil, errors.Wrap(err, service)
		}
	}
	return st, nil
}

// Close closes the etcd client, then the NATS connection.
func (s *Started) Close() {
	_ = s.Etcd.Close()
	s.Bus.Close()
}

// Ready declares the service serving (Base.Ready): /readyz passes while
// its NATS connection is up and etcd answers a read of probe. Call the
// returned function when it stops serving.
func (s *Started) Ready(probe string) (done func()) {
	return s.base.Ready(s.service, s.Bus, s.Etcd, probe)
}
