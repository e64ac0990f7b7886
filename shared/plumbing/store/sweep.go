package store

import (
	"context"
	"strings"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// A sweep finds a job's keys by what they say rather than through its
// allocation record: the record can be gone (deleted by hand) or
// unreadable, and the claims and assignments it named still hold GPUs and
// keep ranks running. It reads every claim, port claim and assignment key,
// so it is for repairs, not for the normal release.

// ErrMalformed marks a stored value that does not decode or contradicts
// itself or its key. Retrying on it never helps: release what can be
// released and say which key it was.
var ErrMalformed = errors.New("malformed value")

func markMalformed(err error) error { return errors.Mark(err, ErrMalformed) }

// IsMalformed reports whether err is about a malformed stored value.
func IsMalformed(err error) bool { return errors.Is(err, ErrMalformed) }

// StoredKey is one key as read, for a delete that must not touch a newer
// write of the same key.
type StoredKey struct {
	Key    string
	ModRev int64
}

// Owned is a claim, port claim or assignment key with the job and attempt
// its value names (Job empty when the value does not decode).
type Owned struct {
	StoredKey
	Job     string
	Attempt int
}

// SweepTargets picks, purely, the keys of job at attempt or older (any
// attempt when attempt < 0). An assignment or allocation record whose value
// does not decode (or names another job) is picked by its key, which names
// the job: no agent can run it and no release can use it.
//
// Assignments come first: a sweep of more keys than one transaction takes
// deletes them before any claim, so no node's GPUs are free to reserve
// while its agent still holds the assignment that runs ranks on them.
func SweepTargets(job string, attempt int, keys []Owned) []StoredKey {
	var assigns, out []StoredKey
	for _, k := range keys {
		mine := k.Job == job && (attempt < 0 || k.Attempt <= attempt)
		if k.Job == "" && LastSegment(k.Key) == job &&
			(strings.HasPrefix(k.Key, AssignPrefix) || k.Key == AllocKey(job)) {
			mine = true
		}
		switch {
		case mine && strings.HasPrefix(k.Key, AssignPrefix):
			assigns = append(assigns, k.StoredKey)
		case mine:
			out = append(out, k.StoredKey)
		}
	}
	return append(assigns, out...)
}

// sweepBatch bounds the deletes of one transaction (etcd's default limit
// is 128 operations).
const sweepBatch = 64

// SweepJob deletes every claim, port claim, assignment and allocation
// record of job at attempt or older (any attempt when attempt < 0), each only if unchanged
// since read, and returns how many it deleted. It returns once a fresh
// scan finds none left, or fails after a few rounds of racing writers.
func SweepJob(ctx context.Context, kv clientv3.KV, job string, attempt int) (int, error) {
	total := 0
	for range 5 {
		keys, err := jobKeys(ctx, kv, job)
		if err != nil {
			return total, err
		}
		targets := SweepTargets(job, attempt, keys)
		if len(targets) == 0 {
			return total, nil
		}
		for len(targets) > 0 {
			batch := targets[:min(sweepBatch, len(targets))]
			targets = targets[len(batch):]
			var cmps []clientv3.Cmp
			var dels []clientv3.Op
			for _, t := range batch {
				cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.Key), "=", t.ModRev))
				dels = append(dels, clientv3.OpDelete(t.Key))
			}
			resp, err := kv.Txn(ctx).If(cmps...).Then(dels...).Commit()
			if err != nil {
				return total, errors.Wrapf(err, "sweep keys of job %s", errors.Safe(job))
			}
			if resp.Succeeded {
				total += len(batch)
			}
		}
	}
	return total, errors.Newf("sweep keys of job %s: they kept changing", errors.Safe(job))
}

// jobKeys reads the claims and port claims (their values name the job),
// and the allocation record and assignments of job (their keys do; the
// values, read one by one, give the attempt).
func jobKeys(ctx context.Context, kv clientv3.KV, job string) ([]Owned, error) {
	var out []Owned
	a, rev, found, err := GetAllocation(ctx, kv, job)
	switch {
	case IsMalformed(err):
		out = append(out, Owned{StoredKey: StoredKey{AllocKey(job), rev}})
	case err != nil:
		return nil, err
	case found:
		out = append(out, Owned{StoredKey: StoredKey{AllocKey(job), rev}, Job: job, Attempt: a.Attempt})
	}
	for _, prefix := range []string{ClaimsPrefix, PortsPrefix} {
		resp, err := kv.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			return nil, errors.Wrapf(err, "list %s", prefix)
		}
		for _, kvp := range resp.Kvs {
			var c domain.Claim
			if codec.Decode(kvp.Value, &c) != nil || c.JobID != job {
				continue
			}
			out = append(out, Owned{StoredKey: StoredKey{string(kvp.Key), kvp.ModRevision}, Job: c.JobID, Attempt: c.Attempt})
		}
	}
	resp, err := kv.Get(ctx, AssignPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, errors.Wrapf(err, "list %s", AssignPrefix)
	}
	for _, kvp := range resp.Kvs {
		key := string(kvp.Key)
		if LastSegment(key) != job {
			continue
		}
		one, err := kv.Get(ctx, key)
		if err != nil {
			return nil, errors.Wrapf(err, "get %s", key)
		}
		if len(one.Kvs) == 0 {
			continue
		}
		o := Owned{StoredKey: StoredKey{key, one.Kvs[0].ModRevision}}
		var as domain.Assignment
		if codec.Decode(one.Kvs[0].Value, &as) == nil && as.JobID == job {
			o.Job, o.Attempt = as.JobID, as.Attempt
		}
		out = append(out, o)
	}
	return out, nil
}
