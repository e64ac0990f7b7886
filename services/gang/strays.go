package gang

import (
	"slices"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// The keys of an allocation are created and deleted together (one
// transaction, or their shared lease), so at any one etcd revision a
// claim, port claim or assignment either belongs to its job's allocation
// or is a stray: left behind by a hand-deleted or corrupt allocation
// record. Strays hold GPUs nobody uses and, for an assignment, keep an
// agent running ranks of an attempt that is over.

// assignRef is an assignment key: assign/<node>/<job>.
type assignRef struct{ Node, Job string }

// strayJobs decides, purely, which jobs have keys their allocation (as
// listed at the same revision) does not account for: a claim or port
// claim of another attempt or of a job with no allocation, an assignment
// on a node outside the allocation's placement. Jobs whose allocation
// record is malformed are left out (they are released as such). Sorted.
func strayJobs(allocs map[string]domain.Allocation, malformed map[string]error, claims []store.Owned, assigns []assignRef) []string {
	stray := map[string]bool{}
	for _, c := range claims {
		if c.Job == "" {
			continue // undecodable: no job to release it for (lockstep check names it)
		}
		if a, ok := allocs[c.Job]; !ok || a.Attempt != c.Attempt {
			stray[c.Job] = true
		}
	}
	for _, as := range assigns {
		if a, ok := allocs[as.Job]; !ok || !onNode(a, as.Node) {
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

// strayUpTo says which attempts of a job with strays to sweep, from its
// record: every attempt before the current one of an unfinished job (the
// current one is the allocation's, or being reserved), every attempt of a
// finished or unknown job. ok is false when the current attempt is active
// with no allocation: the reconciler requeues it, which sweeps it.
func strayUpTo(job jobs.Brief, found bool, hasAlloc bool) (upTo int, ok bool) {
	switch {
	case !found || job.State.Terminal():
		return -1, true
	case job.State.Active() && !hasAlloc:
		return 0, false
	}
	return job.Attempt - 1, true
}
