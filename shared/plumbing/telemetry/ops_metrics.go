package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Gauges that alerts are written on (deploy/prometheus/rules): each says a
// fact only one process knows, so that Prometheus need not infer it.
const (
	// MetricPlacementLeader is 1 on the placement replica that leads, 0
	// on a standby. No replica at 1 means nothing schedules.
	MetricPlacementLeader = "lockstep.placement.leader"
	// MetricDependencyUp is 1 while a serving component's connection to
	// a dependency (nats, etcd) is up.
	MetricDependencyUp = "lockstep.dependency.up"
	// MetricPastSwitchWait counts pending gangs whose bounded topology
	// wait (maxSwitches/waitForSwitches, preferred/preferredWait) has run
	// out and that still wait (placement leader only).
	MetricPastSwitchWait = "lockstep.gangs.past_switch_wait"
)

// Labels of the gauges above.
const (
	// LabelService names the component ("placement/host-1").
	LabelService = attribute.Key("service")
	// LabelDependency is nats or etcd.
	LabelDependency = attribute.Key("dependency")
)

// ObserveLeader reports lockstep.placement.leader for component from
// leading at every collection until the returned function is called.
func (s *Service) ObserveLeader(component string, leading func() bool) (stop func()) {
	return s.observeInt(MetricPlacementLeader, "", "1 on the placement replica that leads, 0 on a standby.",
		func(o observe) { o(boolInt(leading()), LabelService.String(component)) })
}

// ObserveDependencies reports lockstep.dependency.up for component, one
// point per dependency (its name to whether it is up), at every collection
// until the returned function is called. up must not block: it is called
// while Prometheus scrapes.
func (s *Service) ObserveDependencies(component string, up map[string]func() bool) (stop func()) {
	return s.observeInt(MetricDependencyUp, "", "1 while the component's connection to a dependency (nats, etcd) is up.",
		func(o observe) {
			for dep, f := range up {
				o(boolInt(f()), LabelService.String(component), LabelDependency.String(dep))
			}
		})
}

// ObservePastSwitchWait reports lockstep.gangs.past_switch_wait from f
// (pending gangs by queue) at every collection until the returned
// function is called.
func (s *Service) ObservePastSwitchWait(f func() map[string]int) (stop func()) {
	return s.observeInt(MetricPastSwitchWait, "{gang}", "Pending gangs whose bounded topology wait ran out and that still wait, by queue (placement leader).",
		func(o observe) {
			for q, n := range f() {
				o(int64(n), LabelQueue.String(q))
			}
		})
}

// observe records one point of the gauge being observed.
type observe func(v int64, attrs ...attribute.KeyValue)

// observeInt makes (or finds: the SDK returns the same instrument for the
// same name) an int gauge and reports it through report at every
// collection until the returned function is called.
func (s *Service) observeInt(name, unit, desc string, report func(observe)) (stop func()) {
	g, err := s.Meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		return func() {}
	}
	reg, err := s.Meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		report(func(v int64, attrs ...attribute.KeyValue) { o.ObserveInt64(g, v, metric.WithAttributes(attrs...)) })
		return nil
	}, g)
	return unregister(reg, err)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
