package domain

import "time"

// Proposal is placement's suggestion for one attempt of a job, sent to gang.
type Proposal struct {
	JobID      string    `json:"jobId"`
	Attempt    int       `json:"attempt"`
	Placement  Placement `json:"placement"`
	ProposedAt time.Time `json:"proposedAt"`
	// Job and JobRevision are the record placement decided on, so gang can
	// skip re-reading it; the revision makes gang's update a compare-and-set
	// that fails (and falls back to a fresh read) if the job changed since.
	Job         *Job   `json:"job,omitempty"`
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
