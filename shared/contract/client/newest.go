package client

import (
	"encoding/json"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// maxSeen bounds how many jobs' records a client remembers. A process
// that reads more jobs than that (a long-lived pipeline) starts afresh:
// monotonic reads then hold for the jobs it reads again from there on.
const maxSeen = 10_000

// newestSeen keeps, per job, the newest revision of its record a Client
// has returned, so that its reads never go back in time.
//
// In a clustered NATS every replica of the jobs bucket answers reads
// (direct gets, spread at random over the replicas), and a follower may be
// a few milliseconds behind its leader. Without this, a job read as
// succeeded could read as running a moment later. A client that gets an
// older revision than one it has returned returns that newer one again
// instead; the next read will most likely reach a replica that caught up.
type newestSeen struct {
	mu   sync.Mutex
	jobs map[string]seenRecord
}

type seenRecord struct {
	rev uint64
	job domain.Job
}

// newest returns j, read at revision rev, or a copy of the newer record of
// the same job returned before. It keeps j itself, not a copy: a read costs
// no more than before, and the copy is made on the rare stale read.
func (n *newestSeen) newest(j domain.Job, rev uint64) domain.Job {
	n.mu.Lock()
	defer n.mu.Unlock()
	if seen, ok := n.jobs[j.ID]; ok && seen.rev > rev {
		return clone(seen.job)
	}
	if n.jobs == nil || len(n.jobs) >= maxSeen {
		n.jobs = map[string]seenRecord{}
	}
	n.jobs[j.ID] = seenRecord{rev: rev, job: j}
	return j
}

// clone deep-copies a record (its placement, drain and the like are
// pointers): a record returned a second time is the caller's own. A record
// that was decoded encodes again.
func clone(j domain.Job) domain.Job {
	data, err := json.Marshal(j)
	if err != nil {
		return j
	}
	var out domain.Job
	if err := json.Unmarshal(data, &out); err != nil {
		return j
	}
	return out
}
