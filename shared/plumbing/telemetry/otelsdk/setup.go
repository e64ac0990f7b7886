package otelsdk

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Config configures a process's telemetry. Everything about exporters and
// sampling comes from the standard OTEL_* environment variables; these
// fields are what a process knows about itself, plus hooks for dev and tests.
type Config struct {
	// Service names the process ("gang", or "dev" for `lockstep dev`);
	// service.name is "lockstep-" + Service unless OTEL_SERVICE_NAME says
	// otherwise.
	Service  string
	Instance string
	Version  string
	// PerServiceNames is for a process that runs several services (lockstep
	// dev): each service's spans keep their own service.name
	// ("lockstep-gang", ...) and OTEL_SERVICE_NAME is ignored.
	PerServiceNames bool
	// SpanFile, when set, appends every finished span to this JSON-lines
	// file (what `lockstep trace` reads), rotated at SpanFileMaxBytes.
	SpanFile         string
	SpanFileMaxBytes int64
	// SpanExporters receive every span too (tests: an in-memory exporter).
	SpanExporters []sdktrace.SpanExporter
	// Sampler, when set, replaces OTEL_TRACES_SAMPLER (benchmarks, tests).
	Sampler sdktrace.Sampler
	// BatchTimeout is how long finished spans may wait before export
	// (default 1s: `lockstep trace` right after a job should see it).
	BatchTimeout time.Duration
	// Log receives the SDK's own errors (an unreachable collector).
	Log *slog.Logger
}

// Telemetry is one process's telemetry: the span processors shared by every
// service's tracer provider, the meter provider and its Prometheus registry.
type Telemetry struct {
	cfg        Config
	disabled   bool
	processors []sdktrace.SpanProcessor
	envRes     *resource.Resource

	registry *prometheus.Registry
	meters   *sdkmetric.MeterProvider
	metrics  *telemetry.Metrics

	mu       sync.Mutex
	services map[serviceKey]*telemetry.Service
}

type serviceKey struct{ name, instance string }

// Setup builds the process's telemetry from cfg and the environment:
//
//   - OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT): export spans over
//     OTLP; OTEL_EXPORTER_OTLP_PROTOCOL (or ..._TRACES_PROTOCOL) picks grpc
//     or http/protobuf (the default). Without an endpoint there is no OTLP
//     exporter and no network traffic.
//   - OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG: the sampler (default
//     parentbased_always_on), read by the SDK.
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: resource attributes.
//   - OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none: no tracing
//     (respectively no OTLP export); metrics stay on.
//
// It also installs the W3C TraceContext+Baggage propagator as the global
// one. Call it once per process and Shutdown at exit.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.BatchTimeout == 0 {
		cfg.BatchTimeout = time.Second
	}
	if cfg.Log != nil {
		log := cfg.Log
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("telemetry export failed", "err", err) }))
	}
	otel.SetTextMapPropagator(telemetry.Propagator)
	t := &Telemetry{cfg: cfg, services: map[serviceKey]*telemetry.Service{}}
	t.disabled = strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true")

	envRes, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && envRes == nil {
		return nil, errors.Wrap(err, "telemetry resource from OTEL_RESOURCE_ATTRIBUTES")
	}
	t.envRes = envRes

	if !t.disabled {
		exporters := append([]sdktrace.SpanExporter(nil), cfg.SpanExporters...)
		otlp, err := otlpExporter(ctx)
		if err != nil {
			return nil, err
		}
		if cfg.SpanFile != "" {
			fe, err := NewFileExporter(cfg.SpanFile, cfg.SpanFileMaxBytes)
			if err != nil {
				if otlp != nil {
					_ = otlp.Shutdown(ctx)
				}
				return nil, err
			}
			exporters = append(exporters, fe)
		}
		if otlp != nil {
			exporters = append(exporters, otlp)
		}
		for _, e := range exporters {
			t.processors = append(t.processors, sdktrace.NewBatchSpanProcessor(e, sdktrace.WithBatchTimeout(cfg.BatchTimeout)))
		}
	}

	t.registry = prometheus.NewRegistry()
	t.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	prom, err := otelprom.New(
		otelprom.WithRegisterer(t.registry),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		otelprom.WithoutScopeInfo(),
	)
	if err != nil {
		return nil, errors.Wrap(err, "prometheus exporter")
	}
	t.meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(prom),
		sdkmetric.WithResource(t.resource(cfg.Service, cfg.Instance, false)))
	if t.metrics, err = telemetry.NewMetrics(t.meters.Meter(telemetry.ScopeName)); err != nil {
		return nil, err
	}
	return t, nil
}

// otlpExporter builds the OTLP span exporter the environment asks for, or
// none when no endpoint is set.
func otlpExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	if strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return nil, nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "grpc":
		exp, err := otlptracegrpc.New(ctx)
		return exp, errors.Wrap(err, "OTLP gRPC span exporter")
	case "", "http/protobuf":
		exp, err := otlptracehttp.New(ctx)
		return exp, errors.Wrap(err, "OTLP HTTP span exporter")
	}
	return nil, errors.Newf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not grpc or http/protobuf", proto)
}

// resource describes one service instance: Lockstep's attributes, then the
// environment's (which win), then, for a multi-service process, the
// service's own name again.
func (t *Telemetry) resource(service, instance string, pin bool) *resource.Resource {
	attrs := []attribute.KeyValue{
		semconv.ServiceName("lockstep-" + service), semconv.ServiceNamespace("lockstep"),
	}
	if instance != "" {
		attrs = append(attrs, semconv.ServiceInstanceID(instance))
	}
	if t.cfg.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(t.cfg.Version))
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, attrs...)
	if merged, err := resource.Merge(res, t.envRes); err == nil {
		res = merged
	}
	if pin {
		if merged, err := resource.Merge(res, resource.NewSchemaless(semconv.ServiceName("lockstep-"+service))); err == nil {
			res = merged
		}
	}
	return res
}

// Service returns the tracer and instruments of one service instance. In a
// process that runs several services (lockstep dev) each (service, instance)
// gets its own tracer provider, so its spans carry its own service.name,
// while every provider feeds the same span processors and exporters.
// Calling it again returns the same Service. On a nil Telemetry it returns
// the global (by default no-op) providers, so code under test needs no
// setup.
func (t *Telemetry) Service(name, instance string) *telemetry.Service {
	if t == nil {
		return telemetry.GlobalService(name)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := serviceKey{name, instance}
	if s, ok := t.services[key]; ok {
		return s
	}
	s := &telemetry.Service{Name: name, Meter: t.meters.Meter(telemetry.ScopeName), Metrics: t.metrics}
	switch sampler := t.sampler(); {
	case t.disabled:
		s.TracerProvider = noop.NewTracerProvider()
	case len(t.processors) == 0 && sampler != nil:
		s.TracerProvider = newUnrecordedProvider(sampler)
	default:
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(t.resource(name, instance, t.cfg.PerServiceNames))}
		if t.cfg.Sampler != nil {
			opts = append(opts, sdktrace.WithSampler(t.cfg.Sampler))
		}
		for _, p := range t.processors {
			opts = append(opts, sdktrace.WithSpanProcessor(sharedProcessor{p}))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		s.TracerProvider, s.Shutdown = tp, tp.Shutdown
	}
	s.Tracer = s.TracerProvider.Tracer(telemetry.ScopeName)
	t.services[key] = s
	return s
}

// sampler is the sampler of the process's spans, or nil when the
// environment names one (OTEL_TRACES_SAMPLER), which only the SDK reads.
func (t *Telemetry) sampler() sdktrace.Sampler {
	switch {
	case t.cfg.Sampler != nil:
		return t.cfg.Sampler
	case os.Getenv("OTEL_TRACES_SAMPLER") != "":
		return nil
	default:
		return sdktrace.ParentBased(sdktrace.AlwaysSample()) // the SDK's default
	}
}

// sharedProcessor lets several tracer providers feed one processor: a
// provider's Shutdown leaves it running; Telemetry.Shutdown stops it once.
type sharedProcessor struct{ sdktrace.SpanProcessor }

func (sharedProcessor) Shutdown(context.Context) error { return nil }

// MetricsHandler serves the process's metrics in the Prometheus format.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// ForceFlush exports every finished span now.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs error
	for _, p := range t.processors {
		errs = errors.CombineErrors(errs, p.ForceFlush(ctx))
	}
	return errs
}

// Shutdown flushes and stops every provider and exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	services := t.services
	t.services = map[serviceKey]*telemetry.Service{}
	t.mu.Unlock()
	var errs error
	for _, s := range services {
		if s.Shutdown != nil {
			errs = errors.CombineErrors(errs, s.Shutdown(ctx))
		}
	}
	for _, p := range t.processors {
		errs = errors.CombineErrors(errs, p.Shutdown(ctx))
	}
	errs = errors.CombineErrors(errs, t.meters.Shutdown(ctx))
	return errors.Wrap(errs, "telemetry shutdown")
}
