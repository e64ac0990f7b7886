package invariants

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/jobs"
	"github.com/lockstep-dev/lockstep/shared/store"
)

// Collect reads the state from etcd (one consistent revision) and the job
// records. Job records are read after etcd, so a job that finished in
// between looks finished with its allocation still present: callers that
// check a live cluster re-check before reporting (see Check).
func Collect(ctx context.Context, cli *clientv3.Client, js *jobs.Store) (State, error) {
	s := State{
		Claims: map[string]Claim{}, Allocations: map[string]domain.Allocation{},
		Inventory: map[string]bool{}, LiveLeases: map[int64]bool{}, Jobs: map[string]domain.Job{},
	}
	resp, err := cli.Get(ctx, store.Prefix, clientv3.WithPrefix())
	if err != nil {
		return s, errors.Wrap(err, "read etcd")
	}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		switch {
		case strings.HasPrefix(key, store.ClaimsPrefix):
			node, gpu, ok := store.ParseClaimKey(key)
			var c domain.Claim
			if !ok || json.Unmarshal(kv.Value, &c) != nil {
				return s, errors.Newf("malformed claim %s", key)
			}
			s.Claims[fmt.Sprintf("%s/%d", node, gpu)] = Claim{Node: node, GPU: gpu, Job: c.JobID, Lease: kv.Lease}
		case strings.HasPrefix(key, store.AllocPrefix):
			var a domain.Allocation
			if json.Unmarshal(kv.Value, &a) != nil {
				return s, errors.Newf("malformed allocation %s", key)
			}
			s.Allocations[a.JobID] = a
		case strings.HasPrefix(key, store.InventoryPrefix):
			s.Inventory[store.LastSegment(key)] = true
		}
	}
	leases, err := cli.Leases(ctx)
	if err != nil {
		return s, errors.Wrap(err, "list leases")
	}
	for _, l := range leases.Leases {
		s.LiveLeases[int64(l.ID)] = true
	}
	all, err := js.List(ctx)
	if err != nil {
		return s, err
	}
	for _, j := range all {
		s.Jobs[j.ID] = j
	}
	return s, nil
}

// Check collects and evaluates; violations seen in a first pass are
// re-checked after settle, and only those present both times are returned,
// so a transition caught half-way (record updated, etcd not yet released)
// is not reported as a fault.
func Check(ctx context.Context, cli *clientv3.Client, js *jobs.Store, settle time.Duration) ([]Violation, error) {
	s, err := Collect(ctx, cli, js)
	if err != nil {
		return nil, err
	}
	first := Evaluate(s)
	if len(first) == 0 || settle <= 0 {
		return first, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(settle):
	}
	s, err = Collect(ctx, cli, js)
	if err != nil {
		return nil, err
	}
	again := map[string]bool{}
	for _, v := range Evaluate(s) {
		again[v.String()] = true
	}
	var out []Violation
	for _, v := range first {
		if again[v.String()] {
			out = append(out, v)
		}
	}
	return out, nil
}
