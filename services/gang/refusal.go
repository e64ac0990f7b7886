package gang

import (
	"fmt"
	"sort"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// refusal is what a failed reservation transaction read in its Else
// branch: the slots that were taken, in words, and the running keys of
// the job (ranks of an earlier attempt still alive on some node).
type refusal struct {
	conflicts []string
	// ranks are the job's running keys at rev, the transaction's revision.
	ranks []string
	rev   int64
	// own: some slot was held by the job itself (an earlier attempt's
	// claims or allocation), a hold that ends without placement's help.
	own bool
}

// step is what gang does about a refusal.
type step int

const (
	// proposeAgain: the slots may be free on another placement; placement
	// is told at once (a conflict).
	proposeAgain step = iota
	// waitForRanks: whatever the placement, the job may not start while
	// ranks of its earlier attempt are alive; it is proposed again when
	// the last of its running keys goes (awaitRanks), not before.
	waitForRanks
)

// next decides what follows a refusal.
func next(r refusal) step {
	if len(r.ranks) > 0 {
		return waitForRanks
	}
	return proposeAgain
}

// readRefusal names what the Else reads found: "node-3/gpu2 held by
// job-x", "node-1 still runs attempt 1 of the job", sorted.
func readRefusal(kvs []*mvccpb.KeyValue, p domain.Placement, jobID string) refusal {
	var r refusal
	for _, kv := range kvs {
		key := string(kv.Key)
		switch {
		case strings.HasPrefix(key, store.ClaimsPrefix):
			holder, own := claimHolder(kv.Value, jobID)
			r.conflicts = append(r.conflicts, claimName(key)+" held by "+holder)
			r.own = r.own || own
		case strings.HasPrefix(key, store.PortsPrefix):
			holder, own := claimHolder(kv.Value, jobID)
			addr, port, _ := store.ParsePortKey(key)
			r.conflicts = append(r.conflicts, fmt.Sprintf("port %s:%d held by %s", addr, port, holder))
			r.own = r.own || own
		case key == store.AllocKey(jobID):
			r.conflicts = append(r.conflicts, "job already holds an allocation")
			r.own = true
		case isRunningKeyOf(key, jobID):
			// The key counts, readable or not: only its agent (or its
			// lease) may end it.
			r.ranks = append(r.ranks, key)
			if run, err := store.DecodeRunning(key, kv.Value); err == nil {
				r.conflicts = append(r.conflicts, fmt.Sprintf("%s still runs ranks of attempt %d", run.Node, run.Attempt))
			} else {
				r.conflicts = append(r.conflicts, fmt.Sprintf("ranks still run (%v)", err))
			}
		}
	}
	// A node key that is present passed unless it changed; absent ones are
	// down. Report nodes re-registered or gone when nothing else explains it.
	if len(r.conflicts) == 0 {
		r.conflicts = append(r.conflicts, "a node of "+strings.Join(p.NodeNames(), ",")+" re-registered or went down")
	}
	sort.Strings(r.conflicts)
	sort.Strings(r.ranks)
	return r
}

// claimName names the GPU (or the whole node) a claim key holds, as a
// conflict reason says it: "node-3/gpu2", "node-3 (every GPU)".
func claimName(key string) string {
	node, gpu, ok := store.ParseClaimKey(key)
	switch {
	case !ok:
		return "an unreadable claim key"
	case gpu == store.WholeNode:
		return node + " (every GPU)"
	}
	return fmt.Sprintf("%s/gpu%d", node, gpu)
}

// claimHolder names the job a claim value says holds the slot, and whether
// that is jobID. The name goes into the conflict reason, then the job
// record and the conflict event, so only a claim that passes DecodeClaim
// (a job ID's length and characters) is believed; any other is named as
// unreadable, and is not the job's own.
func claimHolder(value []byte, jobID string) (holder string, own bool) {
	c, err := domain.DecodeClaim(value)
	if err != nil {
		return "an unreadable claim", false
	}
	return c.JobID, c.JobID == jobID
}

// isRunningKeyOf reports whether key is a running key of the job, on any
// node.
func isRunningKeyOf(key, jobID string) bool {
	_, job, ok := store.ParseRunningKey(key)
	return ok && job == jobID
}
