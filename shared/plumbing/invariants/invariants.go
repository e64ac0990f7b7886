// Package invariants checks the safety properties Lockstep promises, on a
// snapshot of etcd and the job records:
//
//   - no GPU is claimed by two jobs (claims agree with exactly one allocation);
//   - no claim lives without a live lease or a durable (running) allocation;
//   - every running job holds exactly its gang size;
//   - no allocation belongs to a finished job;
//   - every claim is on a registered node;
//   - every reserved or running job holds an allocation of its attempt;
//   - every assignment belongs to its job's allocation;
//   - no agent reports ranks alive (running/<node>/<job>) of an allocation
//     that is gone, nor of an attempt older than one that is reserved, nor
//     on a node the job's footprint does not name (its next reservation
//     would not wait for them);
//   - every claim is one its owner's allocation names (else its release
//     would leave it behind);
//   - every stored value decodes and agrees with its key.
//
// Evaluate is pure, so tests can feed it states directly; Collect reads a
// live cluster and records what it cannot decode instead of giving up on
// it (a tampered key is exactly what a check must name). `lockstep check`
// runs both and exits non-zero on violation.
package invariants

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// State is everything the invariants are judged on.
type State struct {
	// Claims maps "node/gpu" to the claim and the lease it is attached to.
	Claims map[string]Claim
	// WholeClaims maps a node to its whole-node claim (claims/<node>/all),
	// which Evaluate counts as a claim of each of the node's GPUs.
	WholeClaims map[string]Claim
	// Allocations by job ID.
	Allocations map[string]domain.Allocation
	// Assignments maps "node/job" to the assignment stored for that node.
	Assignments map[string]Assignment
	// Inventory holds every registered node, with its GPU count as its
	// inventory record says (the GPUs a whole-node claim holds).
	Inventory map[string]int
	// Running maps "job/node" to what the node's agent reports alive.
	Running map[string]Running
	// Footprints maps a job to the nodes its latest reservation recorded
	// (footprints/<job>): where its reservations look for running keys.
	Footprints map[string][]string
	// Epochs holds the current registration (epoch) of every live node.
	Epochs map[string]int64
	// LiveLeases holds the IDs of leases that exist (TTL > 0).
	LiveLeases map[int64]bool
	// Jobs by ID.
	Jobs map[string]domain.Job
	// Malformed maps a key (etcd key, or jobs/<id> for a job record) to
	// what is wrong with its value. Such values are left out of the maps
	// above.
	Malformed map[string]string
}

// Claim is one GPU claim as stored (GPU is store.WholeNode's -1 for a
// whole-node claim).
type Claim struct {
	Node  string
	GPU   int
	Job   string
	Lease int64
}

// Assignment is one node's part of a gang as stored (assign/<node>/<job>).
type Assignment struct {
	Node    string
	Job     string
	Attempt int
	Epoch   int64
}

// Running is one running/<node>/<job> key: ranks of that attempt of the
// job are alive on the node.
type Running struct {
	Node    string
	Job     string
	Attempt int
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
	// RuleMalformed: a value that does not decode, or says it is about
	// another job or node than its key.
	RuleMalformed = "malformed-value"
	// RuleActiveNoAlloc: a job recorded as reserved or running with no
	// allocation of its attempt (an allocation deleted behind its back).
	RuleActiveNoAlloc = "active-job-without-allocation"
	// RuleAssignNoAlloc: an assignment whose allocation is gone, is of
	// another attempt or does not place that node.
	RuleAssignNoAlloc = "assignment-without-allocation"
	// RuleRanksNoAlloc: a node's agent reports ranks alive (its running
	// key) of an allocation that is gone, is of another attempt or does not
	// place that node. While the agent stops them (up to its stop grace,
	// 5 s by default) this is expected; past it, they run beside whatever
	// holds their GPUs next.
	RuleRanksNoAlloc = "ranks-without-allocation"
	// RuleRanksBesideNext: ranks of an attempt are alive while a later
	// attempt of the same job holds an allocation — the reservation that
	// must wait for them did not.
	RuleRanksBesideNext = "ranks-beside-next-attempt"
	// RuleRanksOutsideFootprint: ranks of an unfinished job alive on a node
	// its footprint does not name, so its next reservation would not wait
	// for them (a footprint deleted or rewritten by hand).
	RuleRanksOutsideFootprint = "ranks-outside-footprint"
	// RuleStrayClaim: a claim its owner's allocation does not name: a GPU
	// it does not place, a node it does not hold whole (for a whole-node
	// claim), or a GPU of a node it holds whole (for a GPU claim). The
	// release deletes the keys the allocation names (store.ClaimKeys), so
	// such a claim outlives its job and blocks the GPU for good.
	RuleStrayClaim = "claim-outside-allocation"
)

// Evaluate returns every violation in s, sorted.
func Evaluate(s State) []Violation {
	var out []Violation
	add := func(rule, format string, args ...any) {
		out = append(out, Violation{Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}
	for key, why := range s.Malformed {
		add(RuleMalformed, "%s: %s", key, why)
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
	strayClaims(s, owner, add)
	claims := gpuClaims(s, add)
	for key, c := range claims {
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
		if _, registered := s.Inventory[c.Node]; !registered {
			add(RuleUnknownNode, "%s is claimed on node %s, which never registered", key, c.Node)
		}
	}
	for key, job := range owner {
		if c, ok := claims[key]; !ok || c.Job != job {
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
	out = append(out, evaluateJobs(s, claims)...)
	out = append(out, evaluateAssignments(s)...)
	out = append(out, evaluateRunning(s)...)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// strayClaims names the claims whose owner has an allocation that does
// not name them (owner: which job's allocation places each "node/gpu").
// A claim whose owner has no allocation at all is RuleOrphanClaim's.
func strayClaims(s State, owner map[string]string, add func(rule, format string, args ...any)) {
	whole := make(map[string]map[string]bool, len(s.Allocations)) // job → nodes it holds whole
	for id, a := range s.Allocations {
		whole[id] = a.WholeSet()
	}
	for key, c := range s.Claims {
		switch {
		case whole[c.Job] == nil: // no allocation: RuleOrphanClaim's
		case owner[key] != c.Job:
			add(RuleStrayClaim, "%s held by %s, whose allocation does not place it", key, c.Job)
		case whole[c.Job][c.Node]:
			add(RuleStrayClaim, "%s held by %s, whose allocation holds %s whole (one claim for the node)", key, c.Job, c.Node)
		}
	}
	for node, c := range s.WholeClaims {
		if held, ok := whole[c.Job]; ok && !held[node] {
			add(RuleStrayClaim, "%s (every GPU) held by %s, whose allocation does not hold the node whole", node, c.Job)
		}
	}
}

// gpuClaims is every GPU's claim: s.Claims, and each whole-node claim
// counted on every GPU its node has (by its inventory) and every GPU its
// job's allocation places there, should the two disagree (a node that
// re-registered with another count). A whole-node claim beside a GPU claim
// of the same node is a double claim; one whose GPUs neither tells is kept
// under "node/all", so the checks on its owner still run.
func gpuClaims(s State, add func(rule, format string, args ...any)) map[string]Claim {
	out := make(map[string]Claim, len(s.Claims))
	for key, c := range s.Claims {
		out[key] = c
	}
	for node, c := range s.WholeClaims {
		gpus := map[int]bool{}
		for g := range s.Inventory[node] {
			gpus[g] = true
		}
		for _, np := range s.Allocations[c.Job].Placement.Nodes {
			if np.Node == node {
				for _, g := range np.GPUs {
					gpus[g] = true
				}
			}
		}
		if len(gpus) == 0 {
			out[node+"/all"] = c
			continue
		}
		for _, g := range slices.Sorted(maps.Keys(gpus)) {
			key := fmt.Sprintf("%s/%d", node, g)
			if other, ok := s.Claims[key]; ok {
				add(RuleDoubleClaim, "%s is claimed by %s and, with the whole node, by %s", key, other.Job, c.Job)
			}
			c.GPU = g
			out[key] = c
		}
	}
	return out
}

// evaluateJobs checks that every active job holds its gang.
func evaluateJobs(s State, claims map[string]Claim) []Violation {
	var out []Violation
	for id, j := range s.Jobs {
		if !j.State.Active() {
			continue
		}
		a, ok := s.Allocations[id]
		if !ok || a.Attempt != j.Attempt {
			held := "none"
			if ok {
				held = fmt.Sprintf("attempt %d", a.Attempt)
			}
			out = append(out, Violation{RuleActiveNoAlloc, fmt.Sprintf(
				"%s is %s on attempt %d but holds no allocation for it (alloc/%s: %s)", id, j.State, j.Attempt, id, held)})
			continue
		}
		if j.State != domain.StateRunning {
			continue
		}
		gpus, nodes := 0, len(a.Placement.Nodes)
		for _, np := range a.Placement.Nodes {
			for _, g := range np.GPUs {
				if c, ok := claims[fmt.Sprintf("%s/%d", np.Node, g)]; ok && c.Job == id {
					gpus++
				}
			}
		}
		if want := j.Spec.GPUs(); gpus != want || nodes != j.Spec.Gang.Nodes {
			out = append(out, Violation{RuleGangSize, fmt.Sprintf("%s holds %d GPUs on %d nodes, its gang is %d nodes × %d GPUs",
				id, gpus, nodes, j.Spec.Gang.Nodes, j.Spec.Gang.GPUsPerNode)})
		}
	}
	return out
}

// evaluateAssignments checks that every assignment is part of its job's
// allocation, and names the nodes whose agents run ranks of an allocation
// that is gone: those ranks run beside whatever holds their GPUs next.
func evaluateAssignments(s State) []Violation {
	var out []Violation
	for _, as := range s.Assignments {
		why, orphan := unallocated(s, as.Job, as.Attempt, as.Node)
		if !orphan {
			continue
		}
		out = append(out, Violation{RuleAssignNoAlloc, fmt.Sprintf(
			"assign/%s/%s (attempt %d) has no allocation: %s", as.Node, as.Job, as.Attempt, why)})
	}
	return out
}

// evaluateRunning judges what the agents report alive (running keys)
// against the allocations: ranks of an allocation that is gone, and ranks
// beside a later attempt of their job.
func evaluateRunning(s State) []Violation {
	var out []Violation
	for _, r := range s.Running {
		a, ok := s.Allocations[r.Job]
		key := "running/" + r.Node + "/" + r.Job
		if j, found := s.Jobs[r.Job]; found && !j.State.Terminal() && !slices.Contains(s.Footprints[r.Job], r.Node) {
			if _, bad := s.Malformed["footprints/"+r.Job]; !bad {
				out = append(out, Violation{RuleRanksOutsideFootprint, fmt.Sprintf(
					"%s: node %s reports ranks of %s attempt %d alive, but footprints/%s does not name it",
					key, r.Node, r.Job, r.Attempt, r.Job)})
			}
		}
		if ok && a.Attempt > r.Attempt {
			out = append(out, Violation{RuleRanksBesideNext, fmt.Sprintf(
				"%s: node %s reports ranks of %s attempt %d alive while attempt %d holds an allocation",
				key, r.Node, r.Job, r.Attempt, a.Attempt)})
			continue
		}
		why, orphan := unallocated(s, r.Job, r.Attempt, r.Node)
		if !orphan {
			continue
		}
		out = append(out, Violation{RuleRanksNoAlloc, fmt.Sprintf(
			"%s: node %s reports ranks of %s attempt %d alive: %s", key, r.Node, r.Job, r.Attempt, why)})
	}
	return out
}

// unallocated says why attempt of job on node has no allocation that
// accounts for it (gone, of another attempt, not placing the node), or
// false when one does.
func unallocated(s State, job string, attempt int, node string) (why string, orphan bool) {
	a, ok := s.Allocations[job]
	switch {
	case !ok:
		return fmt.Sprintf("alloc/%s is gone", job), true
	case a.Attempt != attempt:
		return fmt.Sprintf("alloc/%s is of attempt %d", job, a.Attempt), true
	case !a.Placement.Places(node):
		return fmt.Sprintf("alloc/%s does not place node %s", job, node), true
	}
	return "", false
}
