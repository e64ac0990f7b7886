package telemetry

import (
	"context"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Metric names (OpenTelemetry style; the Prometheus exporter turns
// "lockstep.gang.wait" with unit "s" into lockstep_gang_wait_seconds, and
// adds _total to counters). docs/telemetry.md lists them with labels.
const (
	MetricSubmissions       = "lockstep.submissions"
	MetricAdmissions        = "lockstep.admissions"
	MetricRejections        = "lockstep.rejections"
	MetricSchedulingLatency = "lockstep.scheduling.latency"
	MetricGangWait          = "lockstep.gang.wait"
	MetricConflicts         = "lockstep.reservation.conflicts"
	MetricRetries           = "lockstep.reservation.retries"
	MetricReservationTxn    = "lockstep.reservation.duration"
	MetricDrainDuration     = "lockstep.drain.duration"
	MetricJobsFinished      = "lockstep.jobs.finished"
	MetricJobEfficiency     = "lockstep.job.efficiency"
	MetricNodeTransitions   = "lockstep.node.transitions"
	MetricQueueDepth        = "lockstep.queue.depth"
	MetricGPUsTotal         = "lockstep.gpus.total"
	MetricGPUsAllocated     = "lockstep.gpus.allocated"
	MetricGPUsUnhealthy     = "lockstep.gpus.unhealthy"
	MetricGangsRunning      = "lockstep.gangs.running"
	MetricNodes             = "lockstep.nodes"
	MetricClusterEfficiency = "lockstep.cluster.efficiency"
	// MetricMalformedAllocations counts alloc/<job> values that did not
	// decode or contradicted themselves, released by sweeping (by gang and
	// by drain, whichever met them).
	MetricMalformedAllocations = "lockstep.allocations.malformed"
	// MetricPlacementCycle is the wall time of each of the placement
	// leader's scheduling cycles (its count, the cycles run): what
	// Slurm's sdiag reports of its main scheduler.
	MetricPlacementCycle = "lockstep.placement.cycle.duration"
)

// Metric labels.
const (
	LabelQueue  = attribute.Key("queue")
	LabelReason = attribute.Key("reason")
	LabelStage  = attribute.Key("stage")
	LabelState  = attribute.Key("state")
	LabelKind   = attribute.Key("kind")
	LabelEvent  = attribute.Key("event")
	LabelLeaf   = attribute.Key("leaf")
	LabelResult = attribute.Key("result")
)

// Rejection reasons (label values of lockstep.rejections).
const (
	RejectInvalid       = "invalid_spec"  // the spec failed validation
	RejectQuota         = "quota"         // bigger than its queue's quota
	RejectUnschedulable = "unschedulable" // the whole cluster could never hold it
	RejectPolicy        = "policy"        // the queue policy refuses its owner (access, priority, user limits)
)

// Stages of lockstep.scheduling.latency.
const (
	StageReserved = "reserved" // queued → every GPU claimed
	StageRunning  = "running"  // queued → every rank running
)

// secondsBuckets suit scheduling times: milliseconds in an idle dev
// cluster to an hour in a full one.
var secondsBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// cycleBuckets suit placement's cycles: a few milliseconds each on a busy
// cluster, mostly waiting on the proposals they send.
var cycleBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// ratioBuckets suit η.
var ratioBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}

// Metrics holds the synchronous instruments; services record at the point
// where they learn the fact. Gauges that need cluster state are observed
// from caches (ObserveQueues, ObserveCluster).
type Metrics struct {
	Submissions       metric.Int64Counter
	Admissions        metric.Int64Counter
	Rejections        metric.Int64Counter
	SchedulingLatency metric.Float64Histogram
	GangWait          metric.Float64Histogram
	Conflicts         metric.Int64Counter
	Retries           metric.Int64Counter
	ReservationTxn    metric.Float64Histogram
	DrainDuration     metric.Float64Histogram
	JobsFinished      metric.Int64Counter
	JobEfficiency     metric.Float64Histogram
	NodeTransitions   metric.Int64Counter
	// MalformedAllocations: see MetricMalformedAllocations.
	MalformedAllocations metric.Int64Counter
	// PlacementCycle: see MetricPlacementCycle.
	PlacementCycle metric.Float64Histogram

	queueDepth, gpusTotal, gpusAllocated, gpusUnhealthy, gangsRunning, nodes metric.Int64ObservableGauge
	clusterEfficiency                                                        metric.Float64ObservableGauge
}

func NewMetrics(m metric.Meter) (*Metrics, error) {
	var out Metrics
	var err, e error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, e := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		err = errors.CombineErrors(err, e)
		return c
	}
	seconds := func(name, desc string) metric.Float64Histogram {
		h, e := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(secondsBuckets...))
		err = errors.CombineErrors(err, e)
		return h
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, e := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		err = errors.CombineErrors(err, e)
		return g
	}
	out.Submissions = counter(MetricSubmissions, "{submission}", "Submissions received by admission (first deliveries).")
	out.Admissions = counter(MetricAdmissions, "{job}", "Jobs admitted, by queue.")
	out.Rejections = counter(MetricRejections, "{job}", "Submissions rejected, by reason: invalid_spec, quota, policy, unschedulable.")
	out.SchedulingLatency = seconds(MetricSchedulingLatency, "Time from queueing (submit, or requeue) to stage=reserved (every GPU claimed) or stage=running (every rank running).")
	out.GangWait = seconds(MetricGangWait, "T_gang_wait: time from (re)queue until the gang's last GPU was claimed, by queue.")
	out.Conflicts = counter(MetricConflicts, "{conflict}", "Reservations that lost a race for a GPU, port or node.")
	out.Retries = counter(MetricRetries, "{proposal}", "Proposals re-sent for an attempt after a reservation conflict.")
	out.ReservationTxn = seconds(MetricReservationTxn, "Duration of the all-or-nothing reservation transaction, by result: reserved, conflict, error.")
	out.DrainDuration = seconds(MetricDrainDuration, "Checkpoint drain time: drain request to resources released, by kind.")
	out.JobsFinished = counter(MetricJobsFinished, "{job}", "Jobs that ended, by final state.")
	out.JobEfficiency, e = m.Float64Histogram(MetricJobEfficiency, metric.WithUnit("1"),
		metric.WithDescription("η of each finished job: compute / (compute + scheduling latency + image pull + drain)."),
		metric.WithExplicitBucketBoundaries(ratioBuckets...))
	err = errors.CombineErrors(err, e)
	out.NodeTransitions = counter(MetricNodeTransitions, "{transition}", "Nodes going up (agent registered) or down (lease expired), by event.")
	out.MalformedAllocations = counter(MetricMalformedAllocations, "{allocation}",
		"Allocation records that did not decode or contradicted themselves; their keys were released by sweeping.")
	out.PlacementCycle, e = m.Float64Histogram(MetricPlacementCycle, metric.WithUnit("s"),
		metric.WithDescription("Wall time of each scheduling cycle of the placement leader: plan the backlog, send its proposals and pending reasons."),
		metric.WithExplicitBucketBoundaries(cycleBuckets...))
	err = errors.CombineErrors(err, e)

	out.queueDepth = gauge(MetricQueueDepth, "{job}", "Pending jobs, by queue and pending reason (placement leader).")
	out.gpusTotal = gauge(MetricGPUsTotal, "{gpu}", "GPUs in the inventory, by leaf switch.")
	out.gpusAllocated = gauge(MetricGPUsAllocated, "{gpu}", "GPUs claimed by gangs, by leaf switch.")
	out.gpusUnhealthy = gauge(MetricGPUsUnhealthy, "{gpu}", "GPUs of live nodes withdrawn by their agent's health checks, by leaf switch.")
	out.gangsRunning = gauge(MetricGangsRunning, "{gang}", "Gangs past the launch barrier (every rank running).")
	out.nodes = gauge(MetricNodes, "{node}", "Inventoried nodes, by state: up or down.")
	out.clusterEfficiency, e = m.Float64ObservableGauge(MetricClusterEfficiency, metric.WithUnit("1"),
		metric.WithDescription("Cluster η over every job: Σ compute / Σ (compute + scheduling latency + image pull + drain), running intervals included."))
	err = errors.CombineErrors(err, e)
	return &out, errors.Wrap(err, "metric instruments")
}

func NoopMetrics() *Metrics {
	m, _ := NewMetrics(metricnoop.NewMeterProvider().Meter(ScopeName))
	return m
}

// queuedAt is when the job's current wait began: its submission for the
// first attempt, its requeue for later ones.
func queuedAt(j domain.Job) time.Time {
	if j.Attempt <= 1 && !j.SubmittedAt.IsZero() {
		return j.SubmittedAt
	}
	return j.PendingSince
}

// JobReserved records a reservation (call once, when the record changed).
func (m *Metrics) JobReserved(ctx context.Context, j domain.Job) {
	m.GangWait.Record(ctx, j.Timing.GangWait.Seconds(), metric.WithAttributes(LabelQueue.String(j.Spec.Queue)))
	m.schedulingLatency(ctx, j, StageReserved, j.ReservedAt)
}

// JobRunning records a gang passing its launch barrier.
func (m *Metrics) JobRunning(ctx context.Context, j domain.Job) {
	m.schedulingLatency(ctx, j, StageRunning, j.RunningAt)
}

// schedulingLatency records j's wait from its queueing until at, when it
// reached stage; a wait that comes out negative is recorded as 0.
func (m *Metrics) schedulingLatency(ctx context.Context, j domain.Job, stage string, at time.Time) {
	m.SchedulingLatency.Record(ctx, max(at.Sub(queuedAt(j)), 0).Seconds(),
		metric.WithAttributes(LabelQueue.String(j.Spec.Queue), LabelStage.String(stage)))
}

// JobFinished records a job's final state and η.
func (m *Metrics) JobFinished(ctx context.Context, j domain.Job) {
	m.JobsFinished.Add(ctx, 1, metric.WithAttributes(LabelState.String(string(j.State))))
	if j.Timing.Compute > 0 {
		m.JobEfficiency.Record(ctx, j.Timing.Efficiency())
	}
}

// Drained records one checkpoint drain.
func (m *Metrics) Drained(ctx context.Context, kind domain.DrainKind, d time.Duration) {
	m.DrainDuration.Record(ctx, d.Seconds(), metric.WithAttributes(LabelKind.String(string(kind))))
}

// QueueDepth is one point of lockstep.queue.depth.
type QueueDepth struct {
	Queue, Reason string
	Jobs          int
}

// PendingReason reduces a job's pending reason to its code, a bounded label
// value: "ReservationConflict: node-3/gpu2 held by x" → ReservationConflict,
// "Reserved (starts ≈ 14:02)" → Reserved, "" → None.
func PendingReason(reason string) string {
	end := strings.IndexFunc(reason, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	})
	if end >= 0 {
		reason = reason[:end]
	}
	if reason == "" {
		return "None"
	}
	return reason
}

// ObserveQueues reports queue depth from f at every collection until the
// returned function is called.
func (s *Service) ObserveQueues(f func() []QueueDepth) (stop func()) {
	m := s.Metrics
	reg, err := s.Meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		for _, d := range f() {
			o.ObserveInt64(m.queueDepth, int64(d.Jobs), metric.WithAttributes(LabelQueue.String(d.Queue), LabelReason.String(d.Reason)))
		}
		return nil
	}, m.queueDepth)
	return unregister(reg, err)
}

// LeafGPUs is the GPU count of one leaf switch.
type LeafGPUs struct {
	Leaf             string
	Total, Allocated int
	// Unhealthy counts the GPUs of live nodes their agents withdrew.
	Unhealthy int
}

// ClusterState is what the cluster gauges report.
type ClusterState struct {
	Leaves       []LeafGPUs
	RunningGangs int
	NodesUp      int
	NodesDown    int
	// Efficiency is the cluster η; HasEfficiency is false before any job
	// computed.
	Efficiency    float64
	HasEfficiency bool
}

// ObserveCluster reports the cluster gauges from f at every collection
// until the returned function is called.
func (s *Service) ObserveCluster(f func() ClusterState) (stop func()) {
	m := s.Metrics
	reg, err := s.Meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st := f()
		for _, l := range st.Leaves {
			leaf := metric.WithAttributes(LabelLeaf.String(l.Leaf))
			o.ObserveInt64(m.gpusTotal, int64(l.Total), leaf)
			o.ObserveInt64(m.gpusAllocated, int64(l.Allocated), leaf)
			o.ObserveInt64(m.gpusUnhealthy, int64(l.Unhealthy), leaf)
		}
		o.ObserveInt64(m.gangsRunning, int64(st.RunningGangs))
		o.ObserveInt64(m.nodes, int64(st.NodesUp), metric.WithAttributes(LabelState.String("up")))
		o.ObserveInt64(m.nodes, int64(st.NodesDown), metric.WithAttributes(LabelState.String("down")))
		if st.HasEfficiency {
			o.ObserveFloat64(m.clusterEfficiency, st.Efficiency)
		}
		return nil
	}, m.gpusTotal, m.gpusAllocated, m.gpusUnhealthy, m.gangsRunning, m.nodes, m.clusterEfficiency)
	return unregister(reg, err)
}

func unregister(reg metric.Registration, err error) func() {
	if err != nil || reg == nil {
		return func() {}
	}
	return func() { _ = reg.Unregister() }
}
