package telemetry

import (
	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// MetricTerminated counts messages a consumer gave up on: terminated
// without their effect, each with a log line (and, for submissions, a
// rejected event). Labels: consumer (the durable), reason (Term*).
const MetricTerminated = "lockstep.messages.terminated"

// LabelConsumer is the durable consumer a message was for.
const LabelConsumer = attribute.Key("consumer")

// Reasons of lockstep.messages.terminated.
const (
	// TermInvalid: the handler said the message can never succeed
	// (malformed, forged, unknown kind).
	TermInvalid = "invalid"
	// TermExhausted: the handler failed on the last delivery MaxDeliver
	// allows.
	TermExhausted = "exhausted"
	// TermTimedOut: no handler answered any delivery within its ack wait
	// (the server's max-deliveries advisory).
	TermTimedOut = "timed_out"
)

// NewTerminatedCounter makes lockstep.messages.terminated on m.
func NewTerminatedCounter(m metric.Meter) (metric.Int64Counter, error) {
	c, err := m.Int64Counter(MetricTerminated, metric.WithUnit("{message}"),
		metric.WithDescription("Messages a consumer terminated without their effect, by consumer and reason: invalid, exhausted (failed on the last allowed delivery), timed_out."))
	return c, errors.Wrap(err, "metric instrument")
}

// RejectInternal labels a lockstep.rejections submission that admission
// could not process within its consumer's MaxDeliver (the others are in
// metrics.go).
const RejectInternal = "internal"
