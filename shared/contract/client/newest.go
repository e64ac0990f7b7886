package client

import (
	"encoding/json"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// maxSeen bounds how many jobs' records a client remembers. One that reads
// more jobs one by one than that (a long-lived pipeline) starts afresh;
// its reads then go on never going back for the jobs it reads again.
const maxSeen = 1000

// newestSeen keeps, per job read with Client.Job, the newest revision of
// its record the client has returned, so that its reads never go back in
// time.
//
// In a clustered NATS every replica of the jobs bucket answers reads
// (direct gets, spread at random over the replicas), and a follower may be
// a few milliseconds behind its leader. Without this, a job read as
// succeeded could read as running a moment later. A client that gets an
// older revision than one it has returned returns a copy of that newer one
// instead; the next read will most likely reach a replica that caught up.
//
// It holds within one Client: another process may still read an older
// revision than this one did. A bucket made anew (a dev cluster reset)
// restarts revisions at 1, and a client that outlives it returns the old
// records of reused IDs until it has read past their revisions.
type newestSeen struct {
	mu   sync.Mutex
	jobs map[string]seenRecord
}

type seenRecord struct {
	rev uint64
	job domain.Job // a copy nobody else holds
}

// keep returns j, read at revision rev, or a copy of the newer record of
// the same job returned before; it remembers j (a copy of it) as the
// newest.
func (n *newestSeen) keep(j domain.Job, rev uint64) domain.Job {
	n.mu.Lock()
	defer n.mu.Unlock()
	if newer, ok := n.newerLocked(j.ID, rev); ok {
		return newer
	}
	own, ok := clone(j)
	if !ok {
		return j
	}
	if _, ok := n.jobs[j.ID]; !ok && len(n.jobs) >= maxSeen {
		n.jobs = nil
	}
	if n.jobs == nil {
		n.jobs = map[string]seenRecord{}
	}
	n.jobs[j.ID] = seenRecord{rev: rev, job: own}
	return j
}

// newer returns a copy of the record of job id kept at a revision past
// rev, if there is one. It remembers nothing: a listing of every record
// (Client.Jobs) consults the memory without filling it.
func (n *newestSeen) newer(id string, rev uint64) (domain.Job, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.newerLocked(id, rev)
}

func (n *newestSeen) newerLocked(id string, rev uint64) (domain.Job, bool) {
	seen, ok := n.jobs[id]
	if !ok || seen.rev <= rev {
		return domain.Job{}, false
	}
	return clone(seen.job)
}

// clone deep-copies a record (its placement, drain, environment and the
// like are pointers, maps and slices), so that the copy kept and the
// records returned share nothing. A record that was decoded encodes
// again; an empty map or list comes back nil, as it decodes from a record
// that omits it. ok is false for a record that does not make the round
// trip (none that decoded should): it is then neither kept nor returned.
func clone(j domain.Job) (out domain.Job, ok bool) {
	data, err := json.Marshal(j)
	if err != nil {
		return domain.Job{}, false
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return domain.Job{}, false
	}
	return out, true
}
