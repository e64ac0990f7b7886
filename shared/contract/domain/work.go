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
)

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
}

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
