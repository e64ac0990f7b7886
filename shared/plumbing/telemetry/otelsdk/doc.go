// Package otelsdk sets up the OpenTelemetry SDK for a process that runs
// Lockstep services: span processors and exporters (OTLP, the span file),
// the meter provider and its Prometheus registry, and the HTTP endpoints
// (/metrics, /healthz, /readyz).
//
// It is apart from package telemetry, which the code traces and measures
// with through the API only, so that the CLI does not link the SDK, the
// exporters and Prometheus: their package initialisation alone cost every
// command milliseconds.
package otelsdk
