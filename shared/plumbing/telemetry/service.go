package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Service is what one service instance records with: its tracer (whose
// resource names the service) and the process's metric instruments.
type Service struct {
	Name           string
	TracerProvider trace.TracerProvider
	Tracer         trace.Tracer
	Meter          metric.Meter
	Metrics        *Metrics
	// Shutdown stops the service's own tracer provider (nil: none).
	Shutdown func(context.Context) error
}

var (
	globalMu       sync.Mutex
	globalServices = map[string]*Service{}
)

// GlobalService uses whatever providers the process installed globally
// (none: no-ops). Instruments are made once per name.
func GlobalService(name string) *Service {
	globalMu.Lock()
	defer globalMu.Unlock()
	if s, ok := globalServices[name]; ok {
		return s
	}
	tp := otel.GetTracerProvider()
	meter := otel.GetMeterProvider().Meter(ScopeName)
	m, err := NewMetrics(meter)
	if err != nil {
		m = NoopMetrics()
	}
	s := &Service{Name: name, TracerProvider: tp, Tracer: tp.Tracer(ScopeName), Meter: meter, Metrics: m}
	globalServices[name] = s
	return s
}
