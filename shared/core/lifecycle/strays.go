package lifecycle

import (
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// The keys of an allocation are created and deleted together (one
// transaction, or their shared lease), so at any one etcd revision a
// claim, port claim or assignment either belongs to its job's allocation
// or is a stray: left behind by a hand-deleted or corrupt allocation
// record. Strays hold GPUs nobody uses and, for an assignment, keep an
// agent running ranks of an attempt that is over.

// AssignKey is an assignment key: assign/<node>/<job>.
type AssignKey struct{ Node, Job string }

// StrayJobs decides which jobs have keys their allocation (as listed at
// the same revision, by job) does not account for: a claim or port claim
// of another attempt or of a job with no allocation, an assignment on a
// node outside the allocation's placement. Jobs whose allocation record is
// malformed are left out (they are released as such). Sorted.
func StrayJobs(allocs map[string]domain.Allocation, malformed map[string]error, claims []domain.Claim, assigns []AssignKey) []string {
	stray := map[string]bool{}
	for _, c := range claims {
		if c.JobID == "" {
			continue // undecodable: no job to release it for (lockstep check names it)
		}
		if a, ok := allocs[c.JobID]; !ok || a.Attempt != c.Attempt {
			stray[c.JobID] = true
		}
	}
	for _, as := range assigns {
		if a, ok := allocs[as.Job]; !ok || !a.Placement.Places(as.Node) {
			stray[as.Job] = true
		}
	}
	var out []string
	for job := range stray {
		if _, bad := malformed[job]; !bad {
			out = append(out, job)
		}
	}
	slices.Sort(out)
	return out
}

// JudgeStrays decides which attempts of a job with strays to sweep, from
// its record (found false: there is none): every attempt before the
// current one of an unfinished job (the current one is the allocation's,
// or being reserved), every attempt of a finished or unknown job. nil when
// the current attempt is active with no allocation: that job is requeued
// (RequeueUnlessHeld), which sweeps it.
func JudgeStrays(jobID string, job domain.JobBrief, found, hasAlloc bool) Action {
	switch {
	case !found || job.State.Terminal():
		return SweepStrays{JobID: jobID, UpTo: -1}
	case job.State.Active() && !hasAlloc:
		return nil
	}
	return SweepStrays{JobID: jobID, UpTo: job.Attempt - 1}
}

// FootprintDone decides whether a job's footprint (where its reservations
// look for ranks of earlier ones) may go: a finished or unknown job is
// never reserved again, so nothing reads it.
func FootprintDone(job domain.JobBrief, found bool) bool { return !found || job.State.Terminal() }
