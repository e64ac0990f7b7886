// Package subjects is the one place that names Lockstep's NATS subjects,
// JetStream streams, durable consumers, KV buckets and header keys.
//
// No other package writes a subject string literal: they call the builders
// here, so the wire contract (documented in docs/events.md) can be read in
// one file.
package subjects

import (
	"strconv"
	"strings"
)

// Version prefix of every subject; bumping it is a breaking change.
const prefix = "lockstep.v1"

// Streams.
const (
	// StreamJobs holds user requests: submissions and cancel/checkpoint
	// commands. Work-queue retention: a request is gone once handled.
	StreamJobs = "LOCKSTEP_JOBS"
	// StreamEvents holds every job and node state change, kept for history
	// (describe, --wait, pipelines).
	StreamEvents = "LOCKSTEP_EVENTS"
	// StreamWork holds internal work items between services (proposals,
	// agent reports). Work-queue retention.
	StreamWork = "LOCKSTEP_WORK"
	// StreamLogs holds rank stdout/stderr lines, bounded by size and age.
	StreamLogs = "LOCKSTEP_LOGS"
	// BucketJobs is the JetStream KV bucket holding one record per job: the
	// durable job queue.
	BucketJobs = "lockstep_jobs"
	// StreamKVJobs is the stream under the jobs bucket (JetStream's KV
	// naming), and KVJobsAll the subjects its keys are stored under.
	StreamKVJobs = "KV_" + BucketJobs
	KVJobsAll    = "$KV." + BucketJobs + ".>"
)

// KVJob is the subject job id's record is stored under in the jobs bucket.
func KVJob(id string) string { return "$KV." + BucketJobs + "." + id }

// DirectGetJob is the JetStream API subject whose answer is the last
// message stored under job id's record: its record, read without a
// consumer.
func DirectGetJob(id string) string { return "$JS.API.DIRECT.GET." + StreamKVJobs + "." + KVJob(id) }

// ReadableStreams are the streams people read through consumers of their
// own (created, pulled from, deleted, never acknowledged): the events, the
// logs, the history and the job records. The services' durable consumers
// are on the others.
func ReadableStreams() []string {
	return []string{StreamEvents, StreamLogs, StreamHistory, StreamKVJobs}
}

// Subjects of the public contract.
const (
	// Submit is where a pipeline publishes a job spec (JSON).
	Submit = prefix + ".jobs.submit"
	// Cancel carries a cancel request ({"jobId": ..., "reason": ...}).
	Cancel = prefix + ".jobs.cancel"
	// Drain carries a drain request (domain.DrainRequest): checkpoint, then
	// requeue or cancel.
	Drain = prefix + ".jobs.drain"
	// CheckpointAck is a request/reply subject (core NATS, answered by the
	// drain replicas as a queue group): a rank's "checkpoint done".
	CheckpointAck = prefix + ".drain.ack"
	// JobsAll matches every request subject.
	JobsAll = prefix + ".jobs.>"

	// NodeDrain and NodeResume carry an operator's node drain and resume
	// (domain.NodeRequest); NodesAll matches both.
	NodeDrain  = prefix + ".nodes.drain"
	NodeResume = prefix + ".nodes.resume"
	NodesAll   = prefix + ".nodes.>"
	// NodeList is a request/reply subject answered by drain replicas with
	// every node's state and GPU use.
	NodeList = prefix + ".admin.nodes"
	// TestOnly (request: a job spec) is answered by the placement leader
	// with where and when the job would start, without submitting it.
	TestOnly = prefix + ".admin.testonly"
	// TopologyView is answered by the placement leader with the switch tree
	// and free/total GPUs per switch.
	TopologyView = prefix + ".admin.topology"

	// EventsAll matches every event.
	EventsAll = prefix + ".events.>"
	// JobEventsAll matches every job event.
	JobEventsAll = prefix + ".events.job.>"
	// JobEventT is the subject template of job events, used for span names.
	// The owner comes first so that one permission rule can give a user
	// their own jobs' events and nobody else's.
	JobEventT = prefix + ".events.job.{owner}.{jobId}.{type}"
	// NodeEventsAll matches every node event.
	NodeEventsAll = prefix + ".events.node.>"
	// NodeEventT is the subject template of node events, used for span names.
	NodeEventT = prefix + ".events.node.{node}.{type}"

	// LogsAll matches every log line.
	LogsAll = prefix + ".logs.>"
	// LogsT is the subject template of rank output, used for span names;
	// owner first, as in JobEventT.
	LogsT = prefix + ".logs.{owner}.{jobId}.{rank}.{stream}"
)

// Internal work subjects.
const (
	WorkAll = prefix + ".work.>"
	// Reserve carries a placement proposal from placement to gang.
	Reserve = prefix + ".work.reserve"
	// Report carries agent reports (ranks started, exited, lost) to gang.
	Report = prefix + ".work.report"
)

// Durable consumer names.
const (
	DurableAdmission = "admission"
	DurableGang      = "gang-reserve"
	DurableReports   = "gang-report"
	DurableDrain     = "drain-cancel"
	DurableDrainReqs = "drain-requests"
	DurableNodeAdmin = "drain-nodes"
	// QueueDrain is the queue group of drain replicas answering acks.
	QueueDrain = "drain"
)

// Header keys.
const (
	// HeaderMsgID is JetStream's de-duplication header.
	HeaderMsgID = "Nats-Msg-Id"
	// HeaderAttempt is on a log line (Logs): the attempt whose rank wrote
	// it, so `lockstep logs` can tell a requeued job's runs apart.
	HeaderAttempt = "Lockstep-Attempt"
)

// NoOwner is the owner token of a job submitted without authentication.
// No identity's name starts with '_' (domain.ValidUserName), so it names nobody.
const NoOwner = "_"

// AnyOwner, passed as an owner, matches every owner's jobs: for services
// and admins, whose permissions cover every owner.
const AnyOwner = "*"

// ownerToken is the subject token of a job's owner.
func ownerToken(owner string) string {
	if owner == "" {
		return NoOwner
	}
	return owner
}

// JobEvent is the subject of one event of owner's job.
func JobEvent(owner, jobID, eventType string) string {
	return prefix + ".events.job." + ownerToken(owner) + "." + jobID + "." + eventType
}

// JobEvents matches every event of one of owner's jobs.
func JobEvents(owner, jobID string) string {
	return prefix + ".events.job." + ownerToken(owner) + "." + jobID + ".>"
}

// UserJobEvents matches every event of every job of owner: what a user
// may read.
func UserJobEvents(owner string) string { return prefix + ".events.job." + ownerToken(owner) + ".>" }

// NodeEvent is the subject of one node event.
func NodeEvent(node, eventType string) string {
	return prefix + ".events.node." + node + "." + eventType
}

// Logs is the subject of one rank's output stream ("stdout" or "stderr")
// of owner's job.
func Logs(owner, jobID string, rank int, stream string) string {
	return prefix + ".logs." + ownerToken(owner) + "." + jobID + "." + strconv.Itoa(rank) + "." + stream
}

// JobLogs matches every log line of one of owner's jobs.
func JobLogs(owner, jobID string) string {
	return prefix + ".logs." + ownerToken(owner) + "." + jobID + ".>"
}

// RankLogs matches every log line of one rank of owner's job.
func RankLogs(owner, jobID string, rank int) string {
	return prefix + ".logs." + ownerToken(owner) + "." + jobID + "." + strconv.Itoa(rank) + ".>"
}

// UserLogs matches every log line of every job of owner: what a user may
// read.
func UserLogs(owner string) string { return prefix + ".logs." + ownerToken(owner) + ".>" }

// LogRank is the rank a log line's subject names, "" when subject is not
// a log line's.
func LogRank(subject string) string {
	rest, ok := strings.CutPrefix(subject, prefix+".logs.")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 4 {
		return ""
	}
	return parts[2]
}

// Template maps a concrete subject to its template (no IDs), the
// low-cardinality name spans and metrics use: a job event's subject becomes
// JobEventT, a node event's NodeEventT, a log line's LogsT, a node's report
// or ack subject Report or CheckpointAck. Subjects without IDs (submit,
// reserve, ...) are their own template.
func Template(subject string) string {
	switch {
	case strings.HasPrefix(subject, prefix+".events.job."):
		return JobEventT
	case strings.HasPrefix(subject, prefix+".events.node."):
		return NodeEventT
	case strings.HasPrefix(subject, prefix+".logs."):
		return LogsT
	case strings.HasPrefix(subject, Report+"."):
		// Per-node subjects keep the family's name: the node is on the
		// span as an attribute already.
		return Report
	case strings.HasPrefix(subject, CheckpointAck+"."):
		return CheckpointAck
	}
	return subject
}

// Token reports whether s is safe as one subject token: non-empty, no
// separators, wildcards or white space.
func Token(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n")
}

// All matches every Lockstep subject.
const All = prefix + ".>"

// SubmitAs is the submission subject of one authenticated user: the server
// lets only that user publish on it, so admission takes the job's owner
// from the subject, never from the spec.
func SubmitAs(user string) string { return Submit + "." + user }

// CancelAs and DrainAs are one user's cancel and drain request subjects.
func CancelAs(user string) string { return Cancel + "." + user }

// DrainAs is one user's drain request subject.
func DrainAs(user string) string { return Drain + "." + user }

// ReportFrom is the report subject of one node: only that node's identity
// may publish on it, so gang knows which node a report really came from.
func ReportFrom(node string) string { return Report + "." + node }

// ReportsAll matches every node's report subject (gang's filter).
const ReportsAll = Report + ".>"

// CheckpointAckFrom is the checkpoint-ack subject of one node: ranks hand
// their acks to their node's agent, which forwards them here. Only that
// node's identity may publish on it, so drain knows which node an ack
// came from.
func CheckpointAckFrom(node string) string { return CheckpointAck + "." + node }

// CheckpointAcksAll matches every node's ack subject (drain's
// subscription).
const CheckpointAcksAll = CheckpointAck + ".>"

// NodeOf is the node named by the last token of a per-node subject
// (ReportFrom, CheckpointAckFrom) under base, or "" when subject is not
// one of them.
func NodeOf(base, subject string) string {
	node, ok := strings.CutPrefix(subject, base+".")
	if !ok || !Token(node) {
		return ""
	}
	return node
}

// Batch job steps (srun): core NATS between the agents of one batch job,
// never a stream. Every subject names its sender and its receiver node,
// so that the server lets only the sender's identity publish on it and
// only the receiver's subscribe (auth's node role).
const (
	// Steps is the root of the step subjects.
	Steps = prefix + ".steps"
	// StepLaunch carries a step's launch (domain.StepLaunch) from the
	// script's node to each node of the step; StepKill ends it there.
	StepLaunch = Steps + ".launch"
	StepKill   = Steps + ".kill"
	// StepOutput carries a step's task output, exits and refusals
	// (domain.StepOutput) back to the script's node.
	StepOutput = Steps + ".out"
)

// StepTo is the subject kind (StepLaunch, StepKill, StepOutput) from one
// node to another.
func StepTo(kind, from, to string) string { return kind + "." + from + "." + to }

// StepsFrom matches what one node may send (any kind, to any node).
func StepsFrom(node string) string { return Steps + ".*." + node + ".*" }

// StepsTo matches what one node receives (any kind, from any node).
func StepsTo(node string) string { return Steps + ".*.*." + node }

// StepSender is the sending node of a step subject, "" when subject is
// not one.
func StepSender(subject string) string {
	rest, ok := strings.CutPrefix(subject, Steps+".")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || !Token(parts[1]) || !Token(parts[2]) {
		return ""
	}
	return parts[1]
}
