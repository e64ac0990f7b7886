// Package invariants checks the safety properties Lockstep promises, on a
// snapshot of etcd and the job records:
//
//   - no GPU is claimed by two jobs (claims agree with exactly one allocation);
//   - no claim lives without a live lease or a durable (running) allocation;
//   - every running job holds exactly its gang size;
//   - no allocation belongs to a finished job;
//   - every claim is on a registered node.
//
// Evaluate is pure, so tests can feed it states directly; Collect reads a
// live cluster. `lockstep check` runs both and exits non-zero on violation.
package invariants

import (
	"fmt"
	"sort"

	"github.com/lockstep-dev/lockstep/shared/domain"
)

// State is everything the invariants are judged on.
type State struct {
	// Claims maps "node/gpu" to the claim and the lease it is attached to.
	Claims map[string]Claim
	// Allocations by job ID.
	Allocations map[string]domain.Allocation
	// Inventory holds every registered node name.
	Inventory map[string]bool
	// LiveLeases holds the IDs of leases that exist (TTL > 0).
	LiveLeases map[int64]bool
	// Jobs by ID.
	Jobs map[string]domain.Job
}

// Claim is one GPU claim as stored.
type Claim struct {
	Node  string
	GPU   int
	Job   string
	Lease int64
}

// Violation is one broken invariant, in words.
type Violation struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

func (v Violation) String() string { return v.Rule + ": " + v.Detail }

// Rules.
const (
	RuleDoubleClaim   = "gpu-claimed-twice"
	RuleOrphanClaim   = "claim-without-owner"
	RuleGangSize      = "running-job-gang-size"
	RuleFinishedAlloc = "allocation-of-finished-job"
	RuleUnknownNode   = "claim-on-unregistered-node"
)

// Evaluate returns every violation in s, sorted.
func Evaluate(s State) []Violation {
	var out []Violation
	add := func(rule, format string, args ...any) {
		out = append(out, Violation{Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}

	// Who, according to the allocations, should hold each GPU.
	owner := map[string]string{}
	for _, a := range s.Allocations {
		for _, np := range a.Placement.Nodes {
			for _, g := range np.GPUs {
				key := fmt.Sprintf("%s/%d", np.Node, g)
				if other, ok := owner[key]; ok && other != a.JobID {
					add(RuleDoubleClaim, "%s is in the allocations of both %s and %s", key, other, a.JobID)
				}
				owner[key] = a.JobID
			}
		}
	}
	for key, c := range s.Claims {
		if o, ok := owner[key]; ok && o != c.Job {
			add(RuleDoubleClaim, "%s is claimed by %s but allocated to %s", key, c.Job, o)
		}
		a, hasAlloc := s.Allocations[c.Job]
		durable := hasAlloc && a.State == domain.AllocRunning && c.Lease == 0
		if !durable && !s.LiveLeases[c.Lease] {
			add(RuleOrphanClaim, "%s held by %s has neither a live lease (lease %x) nor a running allocation", key, c.Job, c.Lease)
		}
		if !hasAlloc {
			add(RuleOrphanClaim, "%s held by %s, which has no allocation", key, c.Job)
		}
		if !s.Inventory[c.Node] {
			add(RuleUnknownNode, "%s is claimed on node %s, which never registered", key, c.Node)
		}
	}
	for key, job := range owner {
		if c, ok := s.Claims[key]; !ok || c.Job != job {
			add(RuleOrphanClaim, "allocation of %s lists %s but does not hold its claim", job, key)
		}
	}
	for id := range s.Allocations {
		j, ok := s.Jobs[id]
		switch {
		case !ok:
			add(RuleFinishedAlloc, "allocation of %s, which has no job record", id)
		case j.State.Terminal():
			add(RuleFinishedAlloc, "allocation of %s, which is %s", id, j.State)
		}
	}
	for id, j := range s.Jobs {
		if j.State != domain.StateRunning {
			continue
		}
		a, ok := s.Allocations[id]
		if !ok || a.Attempt != j.Attempt {
			add(RuleGangSize, "%s is running attempt %d but holds no allocation for it", id, j.Attempt)
			continue
		}
		gpus, nodes := 0, len(a.Placement.Nodes)
		for _, np := range a.Placement.Nodes {
			for _, g := range np.GPUs {
				if c, ok := s.Claims[fmt.Sprintf("%s/%d", np.Node, g)]; ok && c.Job == id {
					gpus++
				}
			}
		}
		if want := j.Spec.GPUs(); gpus != want || nodes != j.Spec.Gang.Nodes {
			add(RuleGangSize, "%s holds %d GPUs on %d nodes, its gang is %d nodes × %d GPUs",
				id, gpus, nodes, j.Spec.Gang.Nodes, j.Spec.Gang.GPUsPerNode)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
