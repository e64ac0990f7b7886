package gang

import (
	"context"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Metric names of what gang refuses. They live here, not in
// shared/plumbing/telemetry, only because that package was not this change's to
// edit; docs/operations.md lists them. (Malformed allocations, which drain
// meets too, are counted by telemetry.Metrics.MalformedAllocations.)
const (
	// MetricProposalsRefused counts proposals terminated unreserved, by
	// reason (the refused* values).
	MetricProposalsRefused = "lockstep.gang.proposals.refused"
	// MetricReportsRefused counts agent reports refused for the node they
	// name, by reason (refusedWrongNode, refusedNotPlaced).
	MetricReportsRefused = "lockstep.gang.reports.refused"
)

// Reasons a proposal is refused (label values of MetricProposalsRefused).
const (
	refusedMalformed   = "malformed"   // the message itself does not decode or lacks a job, attempt or placement
	refusedNoJob       = "no_job"      // no record of the job
	refusedNotPending  = "not_pending" // the job is not pending on the proposal's attempt
	refusedUnfit       = "unfit"       // the placement is not what the job's spec asks for
	refusedUnavailable = "unavailable" // a node of it is down or drained

	// Reasons a report is refused (label values of MetricReportsRefused).
	refusedWrongNode = "wrong_node" // the body names another node than the subject it came on
	refusedNotPlaced = "not_placed" // the node does not hold that attempt in the allocation
)

// counters are gang's instruments beyond telemetry.Metrics.
type counters struct {
	refused metric.Int64Counter
	reports metric.Int64Counter
}

func newCounters(m metric.Meter) (counters, error) {
	refused, err1 := m.Int64Counter(MetricProposalsRefused, metric.WithUnit("{proposal}"),
		metric.WithDescription("Proposals refused by gang (terminated, never retried), by reason: malformed, no_job, not_pending, unfit, unavailable."))
	reports, err2 := m.Int64Counter(MetricReportsRefused, metric.WithUnit("{report}"),
		metric.WithDescription("Agent reports refused (terminated or dropped, never applied) for the node they name, by reason: wrong_node, not_placed."))
	return counters{refused: refused, reports: reports}, errors.Wrap(errors.CombineErrors(err1, err2), "gang instruments")
}

// refuse ends a proposal without reserving anything: a log line naming
// the job and the reason, a count, and a permanent error so the consumer
// terminates the message instead of redelivering it.
func (s *service) refuse(ctx context.Context, prop domain.Proposal, reason, detail string) error {
	s.Log.WarnContext(ctx, "proposal refused", "job", prop.JobID, "attempt", prop.Attempt, "reason", reason, "detail", detail)
	s.counters.refused.Add(ctx, 1, metric.WithAttributes(telemetry.LabelReason.String(reason)))
	return errs.MarkPermanent(errors.Newf("proposal for job %q attempt %d refused (%s): %s", prop.JobID, prop.Attempt, reason, detail))
}

// refuseReport counts and logs a report that is not applied because of the
// node it names; the error it returns is permanent, so the consumer
// terminates the message.
func (s *service) refuseReport(ctx context.Context, r domain.Report, reason, detail string) error {
	s.Log.WarnContext(ctx, "agent report refused", "job", r.JobID, "attempt", r.Attempt, "node", r.Node, "reason", reason, "detail", detail)
	s.counters.reports.Add(ctx, 1, metric.WithAttributes(telemetry.LabelReason.String(reason)))
	return errs.MarkPermanent(errors.Newf("report of job %q attempt %d from node %q refused (%s): %s", r.JobID, r.Attempt, r.Node, reason, detail))
}
