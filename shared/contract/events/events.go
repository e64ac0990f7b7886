// Package events defines the one event envelope Lockstep publishes, its
// types, subjects and de-duplication IDs. schemas/event.v1.json is the
// contract: DecodeFrom checks every event read against it, and
// TestEventsMatchSchema holds the declared types to its enum.
package events

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// Type is an event type; it is also the last subject token.
type Type string

// Job event types.
const (
	Admitted  Type = "admitted"
	Rejected  Type = "rejected"
	Reserved  Type = "reserved"
	Conflict  Type = "conflict"
	Running   Type = "running"
	Succeeded Type = "succeeded"
	Failed    Type = "failed"
	Cancelled Type = "cancelled"
	Requeued  Type = "requeued"
	// Draining: the gang was asked to checkpoint (signal sent); the event
	// is also the per-job control message scripts can subscribe to.
	Draining Type = "draining"
	// Checkpointed: every expected rank acknowledged its checkpoint.
	Checkpointed Type = "checkpointed"
	// Timeout: the job reached its time limit and was drained.
	Timeout Type = "timeout"
	// Refused: a request about the job was refused and changed nothing: a
	// user other than the owner asked to cancel, drain or checkpoint it,
	// or submitted a job under its ID. It names the actor (audit) and is
	// never a state change, so no watcher of the owner's job mistakes it
	// for the job's end.
	Refused Type = "refused"
)

// Node event types.
const (
	NodeUp      Type = "node-up"
	NodeDown    Type = "node-down"
	NodeDrained Type = "node-drained"
	NodeResumed Type = "node-resumed"
	// GPUUnhealthy: the node's agent withdrew GPUs from placement after a
	// failed health check (reason says why); GPUHealthy: an operator's
	// node resume returned them.
	GPUUnhealthy Type = "gpu-unhealthy"
	GPUHealthy   Type = "gpu-healthy"
)

// SystemActorPrefix starts the actor of an action Lockstep took itself:
// "lockstep:placement" (preemption), "lockstep:drain" (time limit, node
// drain). The colon is in no user name, so no user can pass for Lockstep.
const SystemActorPrefix = "lockstep:"

// SystemActor is the actor of an action service took on its own.
func SystemActor(service string) string { return SystemActorPrefix + service }

// Event is the envelope of every event.
type Event struct {
	Type      Type              `json:"type"`
	JobID     string            `json:"jobId,omitempty"`
	Time      time.Time         `json:"time"`
	Attempt   int               `json:"attempt"`
	Reason    string            `json:"reason,omitempty"`
	MsgID     string            `json:"msgId,omitempty"`
	Queue     string            `json:"queue,omitempty"`
	Node      string            `json:"node,omitempty"`
	Rank      *int              `json:"rank,omitempty"`
	ExitCode  *int              `json:"exitCode,omitempty"`
	Restarts  int               `json:"restarts,omitempty"`
	Conflicts []string          `json:"conflicts,omitempty"`
	Placement *domain.Placement `json:"placement,omitempty"`
	// Epoch distinguishes repeated node events (the registration's lease).
	Epoch int64 `json:"epoch,omitempty"`
	// GPUs are the node's GPU indices a gpu-unhealthy or gpu-healthy event
	// is about.
	GPUs []int `json:"gpus,omitempty"`
	// Drain details (draining, checkpointed).
	Drain      *domain.Drain         `json:"drain,omitempty"`
	Signal     string                `json:"signal,omitempty"`
	Checkpoint *domain.CheckpointRef `json:"checkpoint,omitempty"`
	// Timing, on final events and requeues: η's terms so far.
	Timing *domain.Timing `json:"timing,omitempty"`
	// Owner is the job's owner (the authenticated submitter; empty on a
	// cluster without auth).
	Owner string `json:"owner,omitempty"`
	// Actor is who asked for a control action (cancelled, draining and
	// the events ending a drain; refused): a user, or "lockstep:<service>"
	// when Lockstep itself acted (preemption, time limit, node drain).
	// Empty when the request came unauthenticated.
	Actor string `json:"actor,omitempty"`
	// Accounting, on every job event ForJob starts: when the job was
	// submitted, when its current attempt's gang started running, and the
	// gang's shape, so that the accounting history (StreamHistory) can
	// make a job's row from whichever of its events a time window holds.
	SubmittedAt time.Time `json:"submittedAt,omitzero"`
	StartedAt   time.Time `json:"startedAt,omitzero"`
	Nodes       int       `json:"nodes,omitempty"`
	GPUsPerNode int       `json:"gpusPerNode,omitempty"`
}

// Subject is where the event is published.
func (e Event) Subject() string {
	if e.IsNodeEvent() {
		return subjects.NodeEvent(e.Node, string(e.Type))
	}
	return subjects.JobEvent(e.Owner, e.JobID, string(e.Type))
}

// DedupID is the event's Nats-Msg-Id. It is a function of the transition,
// not of the moment, so a service that re-emits after a restart publishes
// the same ID and JetStream drops the copy.
func (e Event) DedupID() string {
	switch e.Type {
	case NodeUp, NodeDown:
		return fmt.Sprintf("node.%s.%s.%d", e.Node, e.Type, e.Epoch)
	case NodeDrained, NodeResumed:
		return fmt.Sprintf("node.%s.%s.%d", e.Node, e.Type, e.Time.UnixNano())
	case GPUUnhealthy, GPUHealthy:
		// Time is the withdrawal's (or the resume's) own time, kept in the
		// node record, so an agent announcing it again after a restart
		// publishes the same ID.
		return fmt.Sprintf("node.%s.%s.%s.%d", e.Node, e.Type, gpuList(e.GPUs), e.Time.UnixNano())
	case Refused:
		// Each refused request is its own record.
		return fmt.Sprintf("job.%s.%d.%s.%s.%d", e.JobID, e.Attempt, e.Type, e.Actor, e.Time.UnixNano())
	case Conflict:
		// Several conflicts can hit one attempt; each is its own event. A
		// re-emitted conflict is informational, so a duplicate is harmless.
		return fmt.Sprintf("job.%s.%d.%s.%d", e.JobID, e.Attempt, e.Type, e.Time.UnixNano())
	}
	return fmt.Sprintf("job.%s.%d.%s", e.JobID, e.Attempt, e.Type)
}

// gpuList joins GPU indices with dashes ("3-5"; "none" for no GPU): a
// message-ID token.
func gpuList(gpus []int) string {
	if len(gpus) == 0 {
		return "none"
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = strconv.Itoa(g)
	}
	return strings.Join(parts, "-")
}

// IsNodeEvent reports whether the event is about a node, not a job.
func (e Event) IsNodeEvent() bool {
	switch e.Type {
	case NodeUp, NodeDown, NodeDrained, NodeResumed, GPUUnhealthy, GPUHealthy:
		return true
	}
	return false
}

// ForJob starts a job event of the given type.
func ForJob(t Type, job domain.Job, now time.Time) Event {
	return Event{
		Type: t, JobID: job.ID, Time: now.UTC(), Attempt: job.Attempt, Queue: job.Spec.Queue, Restarts: job.Restarts, Owner: job.Owner,
		SubmittedAt: job.SubmittedAt.UTC(), StartedAt: job.RunningAt.UTC(), Nodes: job.Spec.Gang.Nodes, GPUsPerNode: job.Spec.Gang.GPUsPerNode,
	}
}
