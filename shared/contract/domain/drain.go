package domain

import "time"

// DrainKind says why a running gang must stop before it finishes.
type DrainKind string

const (
	DrainCancel     DrainKind = "cancel"     // lockstep cancel --checkpoint
	DrainCheckpoint DrainKind = "checkpoint" // lockstep checkpoint: checkpoint and requeue
	DrainPreempt    DrainKind = "preempt"    // a higher-priority gang needs the GPUs
	DrainNode       DrainKind = "node"       // a node of the gang is drained for maintenance
	DrainTimeLimit  DrainKind = "time-limit" // the attempt reached its timeLimit
)

// DrainThen is what happens to the job once drained.
type DrainThen string

const (
	ThenRequeue DrainThen = "requeue"
	ThenCancel  DrainThen = "cancel"
	ThenTimeout DrainThen = "timeout"
)

// Drain is a drain in progress, on the job record.
type Drain struct {
	Kind        DrainKind `json:"kind"`
	Then        DrainThen `json:"then"`
	Reason      string    `json:"reason"`
	RequestedAt time.Time `json:"requestedAt"`
	Deadline    time.Time `json:"deadline"`
	// Actor is who asked for the drain: a user, "lockstep:placement"
	// (preemption) or "lockstep:drain" (time limit, node drain); empty
	// when the request came unauthenticated, on a cluster without auth.
	// The events that end the drain name it too.
	Actor string `json:"actor,omitempty"`
}

// DrainRequest asks the drain service to drain a job (subject
// lockstep.v1.jobs.drain).
type DrainRequest struct {
	JobID  string    `json:"jobId"`
	Kind   DrainKind `json:"kind"`
	Then   DrainThen `json:"then"`
	Reason string    `json:"reason,omitempty"`
}

// CheckpointRef is an acknowledged checkpoint: where a resumed job starts.
type CheckpointRef struct {
	Step    int64     `json:"step"`
	Path    string    `json:"path,omitempty"`
	Rank    int       `json:"rank"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
}

// CheckpointAck is a rank's "checkpoint done" (request subject
// lockstep.v1.drain.ack; agents send one for each ack file they see).
type CheckpointAck struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	Rank    int    `json:"rank"`
	Step    int64  `json:"step"`
	Path    string `json:"path,omitempty"`
}

// AckReply answers a CheckpointAck.
type AckReply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Complete is true when this ack was the last one expected.
	Complete bool `json:"complete,omitempty"`
}

// DrainRecord is the etcd record of a drain in progress (key
// store.DrainKey): any drain replica can finish it.
type DrainRecord struct {
	JobID    string                `json:"jobId"`
	Attempt  int                   `json:"attempt"`
	Drain    Drain                 `json:"drain"`
	Signal   string                `json:"signal"`
	Expected []int                 `json:"expected"`
	Acks     map[int]CheckpointRef `json:"acks,omitempty"`
	// TraceParent is the W3C traceparent of the drain's start: agents and
	// the replica that completes the drain continue the job's trace from it.
	TraceParent string `json:"traceParent,omitempty"`
}

// Acked reports whether every expected rank has acknowledged.
func (r DrainRecord) Acked() bool {
	for _, rank := range r.Expected {
		if _, ok := r.Acks[rank]; !ok {
			return false
		}
	}
	return true
}

// Latest is the acknowledged checkpoint to resume from: the one with the
// lowest step among the acks (every rank has at least that one).
func (r DrainRecord) Latest() *CheckpointRef {
	var best *CheckpointRef
	for _, rank := range r.Expected {
		a, ok := r.Acks[rank]
		if !ok {
			return nil
		}
		if best == nil || a.Step < best.Step {
			a := a
			best = &a
		}
	}
	return best
}

// Timing accumulates the terms of the seed's efficiency over every attempt:
// η = compute / (compute + scheduling latency + image pull + checkpoint drain).
type Timing struct {
	// Compute: time with every rank running, excluding drains.
	Compute time.Duration `json:"compute"`
	// SchedLatency: time from (re)queue to every rank running, less the
	// pull phase (Pull).
	SchedLatency time.Duration `json:"schedLatency"`
	// Pull: a container job's pull phases, from the reservation until
	// every node had the image (PullSummary.Took), summed over attempts.
	Pull time.Duration `json:"pull,omitempty"`
	// GangWait: of the last attempt, time from (re)queue until the last rank's
	// allocation (all GPUs are claimed in one transaction, so that is when
	// the reservation committed).
	GangWait time.Duration `json:"gangWait"`
	// Drain: time from drain request to resources released.
	Drain time.Duration `json:"drain"`
	// LastDrain is the most recent drain's duration.
	LastDrain time.Duration `json:"lastDrain,omitempty"`
}

// Plus is the sum of two timings' terms (LastDrain is o's when set): the
// cluster's η sums every job's.
func (t Timing) Plus(o Timing) Timing {
	t.Compute += o.Compute
	t.SchedLatency += o.SchedLatency
	t.GangWait += o.GangWait
	t.Pull += o.Pull
	t.Drain += o.Drain
	if o.LastDrain != 0 {
		t.LastDrain = o.LastDrain
	}
	return t
}

// Efficiency is η, or 0 before any compute.
func (t Timing) Efficiency() float64 {
	total := t.Compute + t.SchedLatency + t.Pull + t.Drain
	if total <= 0 || t.Compute <= 0 {
		return 0
	}
	return float64(t.Compute) / float64(total)
}
