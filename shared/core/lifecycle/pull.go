package lifecycle

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// PullStep is what gang does with a container gang in its pull phase.
type PullStep int

const (
	// PullNone: the allocation has no pull phase, or it is over.
	PullNone PullStep = iota
	// PullWait: a node has not reported pulled yet.
	PullWait
	// PullStart: every node has the image; the ranks may start (gang clears
	// PullOnly on every assignment at once, and the launch timeout starts).
	PullStart
	// PullFail: a node could not make the image present, or the deadline
	// passed; the attempt fails with Reason and the gang is released.
	PullFail
)

// PullVerdict is JudgePull's answer.
type PullVerdict struct {
	Step   PullStep
	Reason string
}

// PullFailure is one node's pull-failed report: the engine's message.
type PullFailure struct{ Node, Message string }

// Reason prefixes of a failed pull phase, as the job record says them.
const (
	ReasonPullFailed  = "ImagePullFailed"
	ReasonPullTimeout = "PullTimeout"
)

// JudgePull decides a pull phase from the pulled reports recorded on a
// (a.Pull.Nodes, checked against the placement by the caller), the
// pull-failed reports just received, and now. A failure wins over
// everything (its message is the reason, never retried); then every node
// pulled starts the ranks; then a passed deadline fails the attempt.
func JudgePull(a domain.Allocation, failed []PullFailure, now time.Time) PullVerdict {
	p := a.Pull
	if !p.Pending() || a.State != domain.AllocReserved {
		return PullVerdict{Step: PullNone}
	}
	if len(failed) > 0 {
		f := failed[0]
		return PullVerdict{Step: PullFail, Reason: fmt.Sprintf("%s: image %s on node %s: %s", ReasonPullFailed, p.Image, f.Node, f.Message)}
	}
	var missing []string
	for _, np := range a.Placement.Nodes {
		if _, ok := p.Nodes[np.Node]; !ok {
			missing = append(missing, np.Node)
		}
	}
	if len(missing) == 0 {
		return PullVerdict{Step: PullStart}
	}
	if now.After(p.Deadline) {
		return PullVerdict{Step: PullFail, Reason: PullTimeoutReason(a, missing)}
	}
	return PullVerdict{Step: PullWait}
}

// PullTimeoutReason says which nodes did not have the image in time.
func PullTimeoutReason(a domain.Allocation, missing []string) string {
	const most = 8
	names := strings.Join(missing[:min(len(missing), most)], ", ")
	if len(missing) > most {
		names += fmt.Sprintf(" and %d more", len(missing)-most)
	}
	return fmt.Sprintf("%s: image %s was not on %d of %d nodes (%s) within pullTimeout %s of the reservation",
		ReasonPullTimeout, a.Pull.Image, len(missing), len(a.Placement.Nodes), names, a.Pull.Timeout)
}
