// Package telemetry is what Lockstep's code traces and measures with,
// through the OpenTelemetry API only: tracing (W3C trace context in NATS
// headers and in etcd records), metric instruments, and trace IDs on log
// lines. The SDK that exports them, and the /metrics, /healthz and /readyz
// endpoints, are in telemetry/otelsdk, which only processes that run
// services import: the CLI links the API alone, and starts faster for it.
//
//   - service.go: Service, one service instance's tracer and instruments
//     (otelsdk.Setup makes them; GlobalService is the no-op default).
//   - carrier.go: natsHeaderCarrier, the one carrier of trace context in
//     message headers, and the record carrier for etcd and KV records (a
//     W3C traceparent string field).
//   - spans.go: span names from subject templates and the messaging
//     semantic-convention and Lockstep attributes.
//   - metrics.go: every metric instrument, by name and unit.
//   - spanfile.go: reading the JSON-lines span file `lockstep dev` writes
//     (otelsdk.FileExporter) and `lockstep trace` reads.
//   - health.go: readiness checks (served by otelsdk.Handler).
//   - log.go: a slog.Handler that adds trace_id, span_id and job to lines.
//
// docs/telemetry.md lists the span names, attributes and metrics.
package telemetry
