package domain

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// State is a job's lifecycle state. The machine is documented at the top of
// schemas/event.v1.json and in docs/architecture.md.
type State string

const (
	StatePending   State = "pending"
	StateReserved  State = "reserved"
	StateRunning   State = "running"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
	StateRejected  State = "rejected"
	// StateTimeout: the job reached its time limit (after a checkpoint drain).
	StateTimeout State = "timeout"
)

// Terminal reports whether no further transition can happen.
func (s State) Terminal() bool {
	switch s {
	case StateSucceeded, StateFailed, StateCancelled, StateRejected, StateTimeout:
		return true
	}
	return false
}

// Active reports whether the job holds (or is about to hold) resources.
func (s State) Active() bool { return s == StateReserved || s == StateRunning }

// Pending reasons shown by `lockstep queue`.
const (
	ReasonNone      = ""
	ReasonResources = "Resources"
	ReasonPriority  = "Priority"
	ReasonConflict  = "ReservationConflict"
	ReasonNoNodes   = "NoNodes"
	// ReasonDependency: a dependency (or singleton) does not hold yet.
	ReasonDependency = "Dependency"
)

// ReasonDependencyNeverSatisfied starts the reason of a job cancelled
// because a dependency can never hold (Slurm's name for it).
const ReasonDependencyNeverSatisfied = "DependencyNeverSatisfied"

// Job is the durable record of one job (JetStream KV bucket
// subjects.BucketJobs, key = ID). Every writer updates it with a
// compare-and-set on the KV revision (shared/plumbing/jobs).
type Job struct {
	ID   string       `json:"id"`
	Spec jobspec.Spec `json:"spec"`

	State State `json:"state"`
	// Reason explains a pending state ("Resources: ...") or a final one.
	Reason string `json:"reason,omitempty"`
	// Detail says why in numbers, for describe ("16 GPUs free in 1 leaf
	// would need 2 nodes; best now spans 2 leaves").
	Detail string `json:"detail,omitempty"`
	// Attempt counts placements: every requeue starts a new attempt, and
	// work for an older attempt is ignored.
	Attempt int `json:"attempt"`
	// Restarts counts requeues charged to the restart policy.
	Restarts  int        `json:"restarts"`
	Conflicts int        `json:"conflicts,omitempty"`
	Placement *Placement `json:"placement,omitempty"`
	// ExitCode is set when the gang ran to an exit.
	ExitCode *int `json:"exitCode,omitempty"`

	// Drain is set while the gang is being drained.
	Drain *Drain `json:"drain,omitempty"`
	// LastCheckpoint is the last acknowledged checkpoint: the next attempt
	// resumes from it (LOCKSTEP_RESUME_FROM).
	LastCheckpoint *CheckpointRef `json:"lastCheckpoint,omitempty"`
	// Timing holds η's terms, accumulated over attempts.
	Timing Timing `json:"timing"`
	// Pull is the pull phase of the latest attempt that ran in a
	// container (set when its ranks start).
	Pull *PullSummary `json:"pull,omitempty"`

	MsgID       string    `json:"msgId,omitempty"`
	SubmittedAt time.Time `json:"submittedAt"`
	// TraceID is the job's trace (one per job, from the submitting pipeline
	// to the last rank); TraceParent is the W3C traceparent of admission's
	// span, from which every service continues the trace when it acts on the
	// job without a message that carries it (see docs/telemetry.md).
	TraceID     string `json:"traceId,omitempty"`
	TraceParent string `json:"traceParent,omitempty"`
	// PendingSince is when the current attempt started waiting.
	PendingSince time.Time `json:"pendingSince"`
	ReservedAt   time.Time `json:"reservedAt,omitzero"`
	RunningAt    time.Time `json:"runningAt,omitzero"`
	EndedAt      time.Time `json:"endedAt,omitzero"`
	// Owner is the authenticated user who submitted the job (empty on a cluster without auth).
	Owner string `json:"owner,omitempty"`
	// Array is set on a task of a job array: which array, which index.
	Array *ArrayTask `json:"array,omitempty"`
}

// JobBrief is the part of a job record a reconciler needs to compare it
// with etcd. Decoding only these fields skips the spec and placement, the
// bulk of a record: about a third of the CPU of a full decode.
type JobBrief struct {
	ID          string `json:"id"`
	State       State  `json:"state"`
	Attempt     int    `json:"attempt"`
	TraceParent string `json:"traceParent,omitempty"`
	// Owner lets admission count a user's pending jobs.
	Owner string `json:"owner,omitempty"`
}

// BriefOf is j's brief.
func BriefOf(j Job) JobBrief {
	return JobBrief{ID: j.ID, State: j.State, Attempt: j.Attempt, TraceParent: j.TraceParent, Owner: j.Owner}
}
