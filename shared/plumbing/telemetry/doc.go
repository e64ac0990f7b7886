// Package telemetry is the one place that sets up OpenTelemetry for
// Lockstep: tracing (W3C trace context in NATS headers and in etcd records),
// metrics (exported for Prometheus), the /metrics, /healthz and /readyz
// endpoints, and trace IDs on log lines.
//
//   - setup.go: Setup reads the standard OTEL_* environment once per process
//     and returns a Telemetry; Telemetry.Service gives each service instance
//     its tracer (with its own service.name) and the metric instruments.
//   - carrier.go: natsHeaderCarrier, the one carrier of trace context in
//     message headers, and the record carrier for etcd and KV records (a
//     W3C traceparent string field).
//   - spans.go: span names from subject templates and the messaging
//     semantic-convention and Lockstep attributes.
//   - metrics.go: every metric instrument, by name and unit.
//   - spanfile.go: the JSON-lines span file `lockstep dev` writes and
//     `lockstep trace` reads.
//   - health.go, http.go: readiness checks and the HTTP endpoints.
//   - log.go: a slog.Handler that adds trace_id, span_id and job to lines.
//
// docs/telemetry.md lists the span names, attributes and metrics.
package telemetry
