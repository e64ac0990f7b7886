package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Where ranks of a job may be alive.
//
// An agent writes running/<node>/<job> before it starts ranks of the job
// and deletes it once they are gone; no reservation of the job may commit
// while such a key exists. The keys live under the node's name (etcd's
// RBAC grants key ranges, and a node may write only its own), so a
// reservation cannot compare one prefix for the job: it compares the key
// of each node where one may exist, and the job's footprint says which.
//
// The footprint (footprints/<job>) is the nodes of the job's latest
// reservation, and every running key of the job is on one of them:
//   - an agent writes a running key only while its node holds an
//     assignment of the job (the write compares the assignment's
//     CreateRevision), and only a reservation creates assignments, all of
//     them in its allocation;
//   - a reservation commits only if the allocation of the job is absent
//     (so are the earlier allocations' assignments: releases delete them
//     together, requeues sweep strays) and no running key of the job
//     exists on the footprint's nodes or its own; in the same transaction
//     it rewrites the footprint to its own nodes, comparing the
//     footprint's ModRevision as read, so two reservations never both
//     build on one read.
//
// So, by induction over reservations, when one commits no rank of an
// earlier reservation of the job is alive anywhere, and from then on
// running keys of the job can appear only on its own nodes. The compare
// costs one op per node of the previous and the new placement (fewer where
// they overlap), plus one for the footprint.
//
// The footprint has no lease: it must outlive a reservation lease that
// expires after agents started ranks. The release of a job whose record is
// already final deletes it (ReleaseFinished); gang's reconciler deletes
// those of finished and unknown jobs that are left.

// Footprint is the value of footprints/<job>.
type Footprint struct {
	JobID string `json:"jobId"`
	// Attempt is the attempt that reservation was for.
	Attempt int      `json:"attempt"`
	Nodes   []string `json:"nodes"`
}

// FootprintOf is what a reservation of a records.
func FootprintOf(a domain.Allocation) Footprint {
	return Footprint{JobID: a.JobID, Attempt: a.Attempt, Nodes: a.Placement.NodeNames()}
}

// DecodeFootprint decodes the value of a footprint key and checks that it
// agrees with its key; a failure is an ErrMalformed error naming the key.
func DecodeFootprint(key string, value []byte) (Footprint, error) {
	var f Footprint
	if err := codec.Decode(value, &f); err != nil {
		return Footprint{}, markMalformed(errors.Wrapf(err, "%s: undecodable", key))
	}
	bad := func(field, format string, args ...any) error {
		return markMalformed(errors.Newf("%s: %s: %s", key, field, fmt.Sprintf(format, args...)))
	}
	switch {
	case !strings.HasPrefix(key, FootprintPrefix) || f.JobID != LastSegment(key):
		return Footprint{}, bad("jobId", "%q is not the job the key names", f.JobID)
	case f.Attempt < 1:
		return Footprint{}, bad("attempt", "%d is not a positive attempt", f.Attempt)
	case len(f.Nodes) == 0:
		return Footprint{}, bad("nodes", "empty")
	}
	for i, n := range f.Nodes {
		if !domain.ValidNodeName(n) {
			return Footprint{}, bad(fmt.Sprintf("nodes[%d]", i), "%q is not a node name", n)
		}
	}
	return f, nil
}

// Prior is what a reservation must know of the job's earlier ones: the
// nodes where their ranks may still be alive, and the footprint's
// ModRevision as read (0: none), which the reservation compares.
type Prior struct {
	Nodes  []string
	ModRev int64
}

// RunningChecks decides, purely, whose running keys of the job a
// reservation of p must find absent: the prior nodes' and p's own (a
// running key there can only be a prior one, but checking costs little
// and holds even when the footprint was lost), each once, sorted.
func RunningChecks(prior Prior, p domain.Placement) []string {
	nodes := slices.Concat(prior.Nodes, p.NodeNames())
	slices.Sort(nodes)
	return slices.Compact(nodes)
}

// ReadPrior reads the job's footprint. A malformed one (tampered with)
// names no nodes to trust, so the nodes are found another way, at one
// revision: every node with a running key of the job, and the nodes of
// the job's allocation if one is there (its agents may write running keys
// until it is released). The reservation then rewrites the footprint.
func ReadPrior(ctx context.Context, kv clientv3.KV, job string) (Prior, error) {
	key := FootprintKey(job)
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return Prior{}, errors.Wrapf(err, "get %s", key)
	}
	if len(resp.Kvs) == 0 {
		return Prior{}, nil
	}
	f, ferr := DecodeFootprint(key, resp.Kvs[0].Value)
	if ferr == nil {
		return Prior{Nodes: f.Nodes, ModRev: resp.Kvs[0].ModRevision}, nil
	}
	txn, err := kv.Txn(ctx).Then(
		clientv3.OpGet(key),
		clientv3.OpGet(AllocKey(job)),
		clientv3.OpGet(RunningPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return Prior{}, errors.Wrapf(err, "find the running keys of job %s", errors.Safe(job))
	}
	var p Prior
	if kvs := txn.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		p.ModRev = kvs[0].ModRevision
	}
	if kvs := txn.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		if a, err := DecodeAllocation(AllocKey(job), kvs[0].Value); err == nil {
			p.Nodes = a.Placement.NodeNames()
		}
	}
	for _, kv := range txn.Responses[2].GetResponseRange().Kvs {
		if node, j, ok := ParseRunningKey(string(kv.Key)); ok && j == job {
			p.Nodes = append(p.Nodes, node)
		}
	}
	return p, nil
}
