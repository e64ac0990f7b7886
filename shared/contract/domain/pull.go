package domain

import (
	"maps"
	"slices"
	"time"
)

// A container job's gang pulls before it starts: the reservation writes
// each node's assignment with PullOnly set and the allocation with a
// PullPhase; every agent makes the image present (as container.pullPolicy
// says) and reports ReportPulled; once every node has, gang clears
// PullOnly on every assignment in one Txn and the ranks start. A job
// without a container has no pull phase and no extra round trip.

// PullPhase is the pull phase of a container gang's attempt, on its
// allocation.
type PullPhase struct {
	// Image is the container image every node makes present.
	Image string `json:"image"`
	// Timeout is the spec's container.pullTimeout; Deadline is the
	// reservation plus Timeout: a gang not pulled by then fails.
	Timeout  time.Duration `json:"timeout"`
	Deadline time.Time     `json:"deadline"`
	// Nodes holds the pulled reports, by node.
	Nodes map[string]NodePull `json:"nodes,omitempty"`
	// DoneAt is when gang saw the last node's pulled and let the ranks
	// start; zero while the gang pulls.
	DoneAt time.Time `json:"doneAt,omitzero"`
}

// NodePull is what one node's pulled report said.
type NodePull struct {
	// Took is how long the node took to make the image present.
	Took time.Duration `json:"took"`
	// Bytes is the image's size on the node.
	Bytes int64 `json:"bytes"`
	// Pulled is false when the node had the image already.
	Pulled bool `json:"pulled,omitempty"`
}

// Pending reports whether p is a pull phase still waiting for nodes.
func (p *PullPhase) Pending() bool { return p != nil && p.DoneAt.IsZero() }

// Clone is a copy of p whose map the caller may change.
func (p *PullPhase) Clone() *PullPhase {
	if p == nil {
		return nil
	}
	c := *p
	c.Nodes = maps.Clone(p.Nodes)
	return &c
}

// PullSummary is the pull phase of an attempt as the job record keeps it
// (describe's "Pull:" line).
type PullSummary struct {
	// Took is the phase: from the reservation until every node had the
	// image.
	Took time.Duration `json:"took"`
	// Slowest is the node that took longest, SlowestTook how long, and
	// Bytes the image's size there.
	Slowest     string        `json:"slowest"`
	SlowestTook time.Duration `json:"slowestTook"`
	Bytes       int64         `json:"bytes"`
}

// Summary is the finished phase of an allocation reserved at reservedAt;
// nil when there was none or it has not finished.
func (p *PullPhase) Summary(reservedAt time.Time) *PullSummary {
	if p == nil || p.DoneAt.IsZero() {
		return nil
	}
	s := PullSummary{Took: max(p.DoneAt.Sub(reservedAt), 0)}
	for _, node := range slices.Sorted(maps.Keys(p.Nodes)) {
		if n := p.Nodes[node]; s.Slowest == "" || n.Took > s.SlowestTook {
			s.Slowest, s.SlowestTook, s.Bytes = node, n.Took, n.Bytes
		}
	}
	return &s
}
