package place

import (
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Level names a topology domain a gang can be kept within. A node the
// topology does not place is a leaf (and spine) of its own; a node in no
// block is in no block, so it never satisfies LevelBlock.
type Level string

const (
	// LevelNone: no constraint.
	LevelNone Level = ""
	// LevelLeaf: every node under one leaf (ToR) switch.
	LevelLeaf Level = "leaf"
	// LevelSpine: every node under one spine, the parent switch of a leaf.
	// A gang within one leaf is also within one spine. A leaf without a
	// parent is its own spine.
	LevelSpine Level = "spine"
	// LevelBlock: every node in one block (an NVLink domain), independent
	// of the switch tree.
	LevelBlock Level = "block"
)

func (l Level) valid() bool {
	switch l {
	case LevelNone, LevelLeaf, LevelSpine, LevelBlock:
		return true
	}
	return false
}

// Bind is how a rank's GPUs and CPU cores are chosen within a node.
type Bind string

const (
	// BindNone: GPUs lowest index first; cores (when CPUsPerTask > 0) lowest
	// free index first, regardless of NUMA node.
	BindNone Bind = ""
	// BindClosest: each rank's GPUs and cores come from one NUMA node, like
	// Slurm's --gpu-bind=closest.
	BindClosest Bind = "closest"
)

// Constraints mirror the job spec's topology block.
type Constraints struct {
	// MaxSwitches and WaitForSwitches are Slurm's --switches=N@time: until
	// WaitForSwitches after the wait started (Request.WaitSince) only
	// placements on at most MaxSwitches leaf switches are accepted; after
	// it, the best available is taken and the result says it was relaxed.
	// 0 means no limit.
	MaxSwitches     int           `json:"maxSwitches,omitempty"`
	WaitForSwitches time.Duration `json:"waitForSwitches,omitempty"`
	// Required is a hard constraint: the gang runs within one domain of
	// this level or not at all.
	Required Level `json:"required,omitempty"`
	// Preferred acts as Required until PreferredWait after the wait
	// started (Request.WaitSince), then is relaxed (still honoured when
	// possible).
	Preferred     Level         `json:"preferred,omitempty"`
	PreferredWait time.Duration `json:"preferredWait,omitempty"`
}

// Request is the part of a job placement needs.
type Request struct {
	JobID string `json:"jobId"`
	// Nodes × GPUsPerNode is the gang; each node runs TasksPerNode ranks
	// of GPUsPerNode/TasksPerNode GPUs. TasksPerNode is at least 1: the
	// job spec's default (one rank per GPU) is applied by jobspec, and
	// RequestFor reads the filled value.
	Nodes        int `json:"nodes"`
	GPUsPerNode  int `json:"gpusPerNode"`
	TasksPerNode int `json:"tasksPerNode"`
	// CPUsPerTask cores are given to every rank (Rank.CPUs) when > 0.
	CPUsPerTask int  `json:"cpusPerTask,omitempty"`
	GPUBind     Bind `json:"gpuBind,omitempty"`
	// GPUType, when set, is a GPU model the node's must match
	// (GPUTypeMatches); MinGPUMemoryMiB, when > 0, the least memory each
	// of its GPUs must have.
	GPUType         string `json:"gpuType,omitempty"`
	MinGPUMemoryMiB int64  `json:"minGPUMemoryMiB,omitempty"`
	// Container says the job's ranks run from an image: only nodes whose
	// agent runs a container engine take it.
	Container bool        `json:"container,omitempty"`
	Topology  Constraints `json:"topology,omitzero"`
	// WaitSince is when the bounded topology waits (WaitForSwitches,
	// PreferredWait) started: the first decision that found the gang
	// placeable only by relaxing a soft constraint, as Slurm's
	// wait4switch_start, not its submission, so that a job reaching the
	// head of a long queue still waits for a good placement. The zero time
	// means the wait has not started: the decision being made starts it
	// (the wait ends WaitForSwitches after now). Place only reads it; the
	// caller keeps it across decisions with queue.NextWaitSince.
	WaitSince time.Time `json:"waitSince,omitzero"`
}

// Shape is what the node filters read of a request: two requests of one
// shape pass and fail the same filters on the same nodes, so results
// cached by shape (the index's capacity view, the queue's memo of
// failures) answer for both. A filter that reads another Request field
// must add it here, or a cache answers one request with another's result
// (TestShapeHoldsWhatFiltersRead).
type Shape struct {
	GPUsPerNode, TasksPerNode, CPUsPerTask int
	GPUBind                                Bind
	GPUType                                string
	MinGPUMemoryMiB                        int64
	Container                              bool
}

// Shape returns r's shape.
func (r Request) Shape() Shape {
	return Shape{
		GPUsPerNode: r.GPUsPerNode, TasksPerNode: r.TasksPerNode, CPUsPerTask: r.CPUsPerTask, GPUBind: r.GPUBind,
		GPUType: r.GPUType, MinGPUMemoryMiB: r.MinGPUMemoryMiB, Container: r.Container,
	}
}

// WaitEnd is when a bounded wait of w ends for a decision at now: w after
// WaitSince, or w after now when the wait has not started.
func (r Request) WaitEnd(w time.Duration, now time.Time) time.Time {
	if r.WaitSince.IsZero() {
		return now.Add(w)
	}
	return r.WaitSince.Add(w)
}

// RequestFor extracts a Request from a spec. WaitSince is not part of a
// spec: the caller that keeps the wait clocks sets it. The spec's defaults
// are applied first: a job record written before jobspec.Parse filled
// them all (waitForSwitches) reads as it did.
func RequestFor(jobID string, s jobspec.Spec) Request {
	s = s.WithDefaults()
	r := Request{
		JobID:           jobID,
		Nodes:           s.Gang.Nodes,
		GPUsPerNode:     s.Gang.GPUsPerNode,
		TasksPerNode:    s.Gang.TasksPerNode,
		CPUsPerTask:     s.Gang.CPUsPerTask,
		GPUType:         s.Gang.GPUType,
		MinGPUMemoryMiB: s.Gang.MinGPUMemoryMiB,
		Container:       s.Container != nil,
		Topology: Constraints{
			MaxSwitches:     s.Topology.MaxSwitches,
			WaitForSwitches: s.Topology.WaitForSwitches.Duration(),
			Required:        Level(s.Topology.Required),
			Preferred:       Level(s.Topology.Preferred),
			PreferredWait:   s.Topology.PreferredWait.Duration(),
		},
	}
	if s.Gang.GPUBind == string(BindClosest) {
		r.GPUBind = BindClosest
	}
	return r
}

// RequestForJob is RequestFor for a job. WaitSince stays zero: when the
// wait started is the scheduler's memory, not part of the job record (see
// WaitSince).
func RequestForJob(j domain.Job) Request {
	return RequestFor(j.ID, j.Spec)
}

// GPUs is the gang's total GPU count.
func (r Request) GPUs() int { return r.Nodes * r.GPUsPerNode }

// normalized checks the shape. An invalid request is Unschedulable, not
// an error: no cluster can ever run it.
func (r Request) normalized() (Request, error) {
	switch {
	case r.Nodes <= 0:
		return r, errors.Newf("gang needs at least one node, got %d", r.Nodes)
	case r.GPUsPerNode <= 0:
		return r, errors.Newf("gang needs at least one GPU per node, got %d", r.GPUsPerNode)
	case r.TasksPerNode < 1:
		return r, errors.Newf("gang needs at least one rank per node, got %d", r.TasksPerNode)
	case r.GPUsPerNode%r.TasksPerNode != 0:
		return r, errors.Newf("%d ranks cannot share %d GPUs evenly", r.TasksPerNode, r.GPUsPerNode)
	case r.CPUsPerTask < 0:
		return r, errors.Newf("cpusPerTask must not be negative, got %d", r.CPUsPerTask)
	case r.MinGPUMemoryMiB < 0:
		return r, errors.Newf("minGPUMemoryMiB must not be negative, got %d", r.MinGPUMemoryMiB)
	case r.GPUType != "" && len(gpuWords(r.GPUType)) == 0:
		return r, errors.Newf("gpuType %q has no letters or digits", r.GPUType)
	case r.GPUBind != BindNone && r.GPUBind != BindClosest:
		return r, errors.Newf("unknown gpuBind %q (want %q or none)", r.GPUBind, BindClosest)
	case !r.Topology.Required.valid():
		return r, errors.Newf("unknown required topology level %q", r.Topology.Required)
	case !r.Topology.Preferred.valid():
		return r, errors.Newf("unknown preferred topology level %q", r.Topology.Preferred)
	case r.Topology.MaxSwitches < 0:
		return r, errors.Newf("maxSwitches must not be negative, got %d", r.Topology.MaxSwitches)
	}
	return r, nil
}

func (r Request) perRank() int { return r.GPUsPerNode / r.TasksPerNode }
