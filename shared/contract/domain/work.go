package domain

import "time"

// Proposal is placement's suggestion for one attempt of a job, sent to gang.
// It names the job, never carries it: gang takes the spec (command, env,
// shape) from the job record in the jobs KV and checks the placement
// against it, so a forged proposal can run nothing nobody submitted.
type Proposal struct {
	JobID      string    `json:"jobId"`
	Attempt    int       `json:"attempt"`
	Placement  Placement `json:"placement"`
	ProposedAt time.Time `json:"proposedAt"`
	// JobRevision is the KV revision of the record placement decided on:
	// gang uses its own copy of the record when it is at least that new,
	// and reads the KV otherwise. It is a hint for a compare, not a claim
	// gang trusts.
	JobRevision uint64 `json:"jobRevision,omitempty"`
	// Note explains the placement when it is worth saying (a relaxed
	// topology constraint, a backfill); gang puts it on the reserved event.
	Note string `json:"note,omitempty"`
}

// ReportKind is what an agent says about its part of a gang.
type ReportKind string

const (
	// ReportStarted: every local rank of the gang was launched.
	ReportStarted ReportKind = "started"
	// ReportExited: every local rank exited; ExitCode is the worst code.
	ReportExited ReportKind = "exited"
	// ReportFailed: a local rank exited non-zero (Rank, ExitCode set).
	ReportFailed ReportKind = "failed"
	// ReportLost: the agent holds an assignment it is not running (it
	// restarted, or the assignment was for an earlier registration).
	ReportLost ReportKind = "lost"
	// ReportPulled: the node has the container image of a gang in its pull
	// phase (PullMillis, ImageBytes, Pulled set); it starts nothing until
	// gang clears the assignment's PullOnly.
	ReportPulled ReportKind = "pulled"
	// ReportPullFailed: the node could not make the image present; Reason
	// is the engine's message. The attempt fails.
	ReportPullFailed ReportKind = "pull-failed"
)

// ReportKinds are every report kind, as decoders accept them.
var ReportKinds = []ReportKind{ReportStarted, ReportExited, ReportFailed, ReportLost, ReportPulled, ReportPullFailed}

// Report is an agent's message to gang about one job attempt on one node.
type Report struct {
	JobID    string     `json:"jobId"`
	Attempt  int        `json:"attempt"`
	Node     string     `json:"node"`
	Kind     ReportKind `json:"kind"`
	Rank     int        `json:"rank,omitempty"`
	ExitCode int        `json:"exitCode,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Time     time.Time  `json:"time"`
	// Of a pulled report: how long the node took to make the image
	// present, the image's size, and whether it pulled (false: it had it).
	PullMillis int64 `json:"pullMs,omitempty"`
	ImageBytes int64 `json:"imageBytes,omitempty"`
	Pulled     bool  `json:"pulled,omitempty"`
}

// Bounds of a pulled report's numbers.
const (
	// MaxPullMillis is a day: no pull phase may last longer
	// (jobspec.MaxPullTimeout).
	MaxPullMillis = 24 * 60 * 60 * 1000
	// MaxImageBytes is 1 TiB.
	MaxImageBytes = 1 << 40
)

// CancelRequest asks for a job to be stopped.
type CancelRequest struct {
	JobID  string `json:"jobId"`
	Reason string `json:"reason,omitempty"`
}

// TestOnlyReply answers `lockstep submit --test-only`.
type TestOnlyReply struct {
	// Start is true when the job would start now.
	Start     bool       `json:"start"`
	Placement *Placement `json:"placement,omitempty"`
	// StartsAt is the reserved start when the job would wait for one.
	StartsAt time.Time `json:"startsAt,omitzero"`
	Reason   string    `json:"reason,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	Error    string    `json:"error,omitempty"`
}
