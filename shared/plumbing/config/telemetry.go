package config

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/connectivity"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry/otelsdk"
)

// Default --metrics-addr of each service process. They differ so that
// several services can share a host (and none takes Prometheus's own
// 9090); DevMetricsAddr is `lockstep dev`'s.
var DefaultMetricsAddr = map[string]string{
	"admission": ":9465",
	"placement": ":9466",
	"gang":      ":9467",
	"drain":     ":9468",
	"agent":     ":9469",
}

// DevMetricsAddr is where `lockstep dev` serves /metrics by default.
const DevMetricsAddr = "127.0.0.1:9464"

// StartTelemetry sets up tracing and metrics for a one-service process from
// the OTEL_* environment (otelsdk.Setup) and serves /metrics, /healthz and
// /readyz on MetricsAddr. stop flushes spans and stops serving.
func (b *Base) StartTelemetry(ctx context.Context, service, version string) (stop func(), err error) {
	tel, err := otelsdk.Setup(ctx, otelsdk.Config{Service: service, Instance: b.Instance, Version: version, Log: b.Logger()})
	if err != nil {
		return nil, errors.Wrap(err, "telemetry")
	}
	b.Telemetry, b.Health = tel, telemetry.NewHealth()
	b.Health.Require(service)
	sctx, cancel := context.WithCancel(ctx)
	if b.MetricsAddr != "" {
		addr, err := otelsdk.Serve(sctx, b.MetricsAddr, otelsdk.Handler(tel, b.Health))
		if err != nil {
			cancel()
			_ = tel.Shutdown(context.Background())
			return nil, errors.WithHint(err, "pick another --metrics-addr, or \"\" for none")
		}
		b.Logger().Info("serving /metrics, /healthz and /readyz", "service", service, "addr", addr)
	}
	return func() {
		cancel()
		fctx, fc := context.WithTimeout(context.Background(), 5*time.Second)
		defer fc()
		if err := tel.Shutdown(fctx); err != nil {
			b.Logger().Warn("telemetry shutdown", "err", err)
		}
	}, nil
}

// Ready declares the service serving: /readyz passes while its NATS
// connection is up with every consumer running and etcd answers a read of
// probe, a key this identity may read (with etcd's RBAC on, a node may read
// only its own keys). Call it once the service's consumers and watches have
// started; call the returned function when it stops.
//
// While it serves, lockstep.dependency.up says whether its connections to
// NATS and etcd are up, from the clients' own state (no request: it is
// read while Prometheus scrapes).
func (b *Base) Ready(service string, bs *bus.Bus, cli *clientv3.Client, probe string) (done func()) {
	name := b.Component(service)
	removeChecks := b.Health.Add(name, bs.Ready, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := cli.Get(ctx, probe, clientv3.WithCountOnly(), clientv3.WithSerializable())
		return errors.Wrap(err, "etcd")
	})
	stopGauge := b.Instruments(service).ObserveDependencies(name, map[string]func() bool{
		"nats": bs.NC.IsConnected,
		"etcd": func() bool { return etcdConnected(cli) },
	})
	return func() {
		stopGauge()
		removeChecks()
	}
}

// Component names one service instance in readiness lines and metric
// labels: "gang", or "gang/<instance>".
func (b *Base) Component(service string) string {
	if b.Instance == "" {
		return service
	}
	return service + "/" + b.Instance
}

// etcdConnected is whether the client's gRPC connection reaches a member
// (Ready), or has no reason to (Idle: nothing asked it lately).
func etcdConnected(cli *clientv3.Client) bool {
	switch cli.ActiveConnection().GetState() {
	case connectivity.Ready, connectivity.Idle:
		return true
	}
	return false
}
