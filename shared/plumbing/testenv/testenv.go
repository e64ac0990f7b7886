// Package testenv starts real NATS (JetStream) and etcd servers for tests,
// embedded in the test process on free loopback ports with data in
// t.TempDir(). It is the one way tests get infrastructure; nothing is
// mocked.
package testenv

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth/etcdauth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/embedded"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Env is a running test environment.
type Env struct {
	NATSURL      string
	EtcdEndpoint string
	// Bus and Etcd are clients for the test itself.
	Bus  *bus.Bus
	Etcd *clientv3.Client
	// Auth is the cluster's authority and CA when started WithAuth (nil
	// otherwise); Credentials issues identities from it.
	Auth *Authority
}

// Option adjusts the environment.
type Option func(*options)

type options struct {
	fsync, auth  bool
	maxConsumers int
}

// WithFsync keeps etcd's fsync on (benchmarks that must measure it).
func WithFsync() Option { return func(o *options) { o.fsync = true } }

// WithAccountMaxConsumers gives NATS's account a limit of n consumers per
// stream (without WithAuth), as an operator's account may have.
func WithAccountMaxConsumers(n int) Option { return func(o *options) { o.maxConsumers = n } }

// Start brings up NATS and etcd and registers their shutdown with t.Cleanup.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	nc := embedded.NATSConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), MaxConsumers: o.maxConsumers}
	ec := embedded.EtcdConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), NoFsync: !o.fsync}
	var a *Authority
	if o.auth {
		a = newAuthority(t)
		nc.Trust, ec.TLS = &a.trust, &a.etcdServer
	}
	ns, err := embedded.StartNATS(nc)
	if err != nil {
		t.Fatalf("start nats: %v", err)
	}
	t.Cleanup(ns.Close)
	es, err := embedded.StartEtcd(ec)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(es.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The test's own clients act as admin (etcd's root).
	var creds connection.Credentials
	if a != nil {
		creds = a.rootCredentials(t)
	}
	b, err := bus.Connect(ctx, ns.URL(), "test", creds.BusOptions()...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(b.Close)
	if err := b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatalf("%v", err)
	}
	cli, err := store.Connect(ctx, es.Endpoint(), store.WithCredentials(creds))
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	if a != nil {
		a.etcd = cli
		if err := etcdauth.EnableEtcdAuth(ctx, cli); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return &Env{NATSURL: ns.URL(), EtcdEndpoint: es.Endpoint(), Bus: b, Etcd: cli, Auth: a}
}

// Base is the configuration of a service under test on e: e's servers, one
// stream replica, and a FailureLog.
func (e *Env) Base(t testing.TB) config.Base {
	return config.Base{NATSURL: e.NATSURL, Etcd: e.EtcdEndpoint, StreamReplicas: 1, Log: FailureLog(t)}
}

// Serve runs run (a service's Run) until the test ends: the test's cleanup
// cancels its context and waits for it to return. An error it returns
// while the test still runs fails the test.
func Serve(t testing.TB, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("service stopped: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// Jobs binds the jobs bucket, for the test itself.
func (e *Env) Jobs(t testing.TB) *jobs.Store {
	t.Helper()
	js, err := jobs.Open(context.Background(), e.Bus.JS)
	if err != nil {
		t.Fatalf("open jobs bucket: %v", err)
	}
	return js
}

// Lease grants an etcd lease of ttl (whole seconds) that the test does not
// keep alive: for node registrations and reservations that must stay up
// for the test's length, a ttl longer than the test.
func (e *Env) Lease(t testing.TB, ttl time.Duration) clientv3.LeaseID {
	t.Helper()
	l, err := e.Etcd.Grant(context.Background(), int64(ttl/time.Second))
	if err != nil {
		t.Fatalf("grant lease: %v", err)
	}
	return l.ID
}

// Eventually polls cond every 20ms until it returns nil or timeout passes,
// then fails the test with cond's last error. Tests wait with it, never
// with sleeps.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	EventuallyEvery(t, timeout, 20*time.Millisecond, cond)
}

// EventuallyEvery is Eventually polling every interval: for conditions
// that are costly to check, such as ones that ask a cluster over the
// network.
func EventuallyEvery(t testing.TB, timeout, interval time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}
