package telemetry

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Propagator is W3C TraceContext plus Baggage; otelsdk.Setup also installs
// it as the global propagator.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// natsHeaderCarrier is the one carrier of trace context in NATS message
// headers: the bus injects into every published message and extracts from
// every consumed one. Keys are stored as given (W3C's lowercase
// "traceparent"); lookups fall back to a case-insensitive match, for
// publishers that capitalise header names.
type natsHeaderCarrier nats.Header

var _ propagation.TextMapCarrier = natsHeaderCarrier{}

func (c natsHeaderCarrier) Get(key string) string {
	if v := nats.Header(c).Get(key); v != "" {
		return v
	}
	for k, vs := range c {
		if len(vs) > 0 && strings.EqualFold(k, key) {
			return vs[0]
		}
	}
	return ""
}

func (c natsHeaderCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }

func (c natsHeaderCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Inject writes the trace context of ctx into message headers (nothing when
// ctx carries no span). h must not be nil: nats.NewMsg makes it.
func Inject(ctx context.Context, h nats.Header) { Propagator.Inject(ctx, natsHeaderCarrier(h)) }

// Extract returns ctx with the trace context (and baggage) found in message
// headers, if any, as the remote parent.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return Propagator.Extract(ctx, natsHeaderCarrier(h))
}

// traceParentKey is the W3C header that records store.
const traceParentKey = "traceparent"

// recordField carries trace context in a record's TraceParent field (job
// records in the KV bucket; allocations, assignments and drain records in
// etcd): the same propagator as for headers, limited to traceparent, since
// records are not messages and outlive any baggage.
type recordField struct{ v *string }

var _ propagation.TextMapCarrier = recordField{}

func (f recordField) Get(key string) string {
	if key == traceParentKey {
		return *f.v
	}
	return ""
}

func (f recordField) Set(key, value string) {
	if key == traceParentKey {
		*f.v = value
	}
}

func (f recordField) Keys() []string { return []string{traceParentKey} }

// TraceParent returns the W3C traceparent of the span in ctx, for a
// record's TraceParent field; "" when ctx carries no valid span.
func TraceParent(ctx context.Context) string {
	var tp string
	Propagator.Inject(ctx, recordField{&tp})
	return tp
}

// WithTraceParent returns ctx with a record's traceparent as the remote
// parent of the next span. An empty or malformed tp leaves ctx as it is.
func WithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return Propagator.Extract(ctx, recordField{&tp})
}

// TraceID returns the trace ID of the span in ctx ("" when none).
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// SpanContextOf parses a record's traceparent (invalid when tp is not one).
func SpanContextOf(tp string) trace.SpanContext {
	return trace.SpanContextFromContext(WithTraceParent(context.Background(), tp))
}
