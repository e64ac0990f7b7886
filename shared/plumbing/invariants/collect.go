package invariants

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Collect reads the state from etcd (one consistent revision) and the job
// records. Job records are read after etcd, so a job that finished in
// between looks finished with its allocation still present: callers that
// check a live cluster re-check before reporting (see Check).
//
// A value that does not decode, or contradicts its key, goes to
// State.Malformed and is otherwise left out; only a failure to read at all
// is an error.
func Collect(ctx context.Context, cli *clientv3.Client, js *jobs.Store) (State, error) {
	s := State{
		Claims: map[string]Claim{}, WholeClaims: map[string]Claim{}, Allocations: map[string]domain.Allocation{}, Assignments: map[string]Assignment{},
		Running: map[string]Running{}, Footprints: map[string][]string{},
		Inventory: map[string]int{}, Epochs: map[string]int64{}, LiveLeases: map[int64]bool{},
		Jobs: map[string]domain.Job{}, Malformed: map[string]string{},
	}
	resp, err := cli.Get(ctx, store.Prefix, clientv3.WithPrefix())
	if err != nil {
		return s, errors.Wrap(err, "read etcd")
	}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		if why := s.add(key, kv.Value, kv.Lease); why != "" {
			s.Malformed[strings.TrimPrefix(key, store.Prefix)] = why
		}
	}
	leases, err := cli.Leases(ctx)
	if err != nil {
		return s, errors.Wrap(err, "list leases")
	}
	for _, l := range leases.Leases {
		s.LiveLeases[int64(l.ID)] = true
	}
	err = js.Scan(ctx, func(e jobs.Entry) error {
		if e.Deleted {
			return nil
		}
		j, why := decodeJob(e.Key, e.Value)
		if why != "" {
			s.Malformed["jobs/"+e.Key] = why
			return nil
		}
		s.Jobs[j.ID] = j
		return nil
	})
	return s, errors.Wrap(err, "read job records")
}

// decodeClaim decodes a GPU or port claim (what names which) and checks
// that it names a job.
func decodeClaim(value []byte, what string) (domain.Claim, string) {
	var c domain.Claim
	if why := decode(value, &c); why != "" {
		return c, why
	}
	if c.JobID == "" {
		return c, what + " names no job"
	}
	return c, ""
}

// add files one etcd value under s and returns what is wrong with it, if
// anything ("" when it is fine or not a key the invariants judge).
func (s *State) add(key string, value []byte, lease int64) string {
	switch {
	case strings.HasPrefix(key, store.ClaimsPrefix):
		node, gpu, ok := store.ParseClaimKey(key)
		if !ok {
			return "not a claims/<node>/<gpu> or claims/<node>/all key"
		}
		c, why := decodeClaim(value, "claim")
		if why != "" {
			return why
		}
		claim := Claim{Node: node, GPU: gpu, Job: c.JobID, Lease: lease}
		if gpu == store.WholeNode {
			s.WholeClaims[node] = claim
			return ""
		}
		s.Claims[fmt.Sprintf("%s/%d", node, gpu)] = claim
	case strings.HasPrefix(key, store.PortsPrefix):
		if _, _, ok := store.ParsePortKey(key); !ok {
			return "not a ports/<addr>/<port> key"
		}
		if _, why := decodeClaim(value, "port claim"); why != "" {
			return why
		}
	case strings.HasPrefix(key, store.AllocPrefix):
		job := strings.TrimPrefix(key, store.AllocPrefix)
		var a domain.Allocation
		if why := decode(value, &a); why != "" {
			return why
		}
		if why := checkAllocation(job, a); why != "" {
			return why
		}
		s.Allocations[job] = a
	case strings.HasPrefix(key, store.AssignPrefix):
		node, job, ok := strings.Cut(strings.TrimPrefix(key, store.AssignPrefix), "/")
		if !ok || node == "" || job == "" || strings.Contains(job, "/") {
			return "not an assign/<node>/<job> key"
		}
		var as domain.Assignment
		if why := decode(value, &as); why != "" {
			return why
		}
		if as.JobID != job || as.Node != node {
			return fmt.Sprintf("value is for job %q on node %q", as.JobID, as.Node)
		}
		s.Assignments[node+"/"+job] = Assignment{Node: node, Job: job, Attempt: as.Attempt, Epoch: as.Epoch}
	case strings.HasPrefix(key, store.NodesPrefix), strings.HasPrefix(key, store.InventoryPrefix):
		name := store.LastSegment(key)
		var n domain.Node
		if why := decode(value, &n); why != "" {
			return why
		}
		if n.Name != name {
			return fmt.Sprintf("value is for node %q", n.Name)
		}
		if strings.HasPrefix(key, store.NodesPrefix) {
			s.Epochs[name] = n.Epoch
		} else {
			s.Inventory[name] = n.GPUs
		}
	case strings.HasPrefix(key, store.RunningPrefix):
		r, err := store.DecodeRunning(key, value)
		if err != nil {
			// The error names the key; the map's key names it already.
			_, why, _ := strings.Cut(err.Error(), ": ")
			return why
		}
		s.Running[r.JobID+"/"+r.Node] = Running{Node: r.Node, Job: r.JobID, Attempt: r.Attempt}
	case strings.HasPrefix(key, store.FootprintPrefix):
		f, err := store.DecodeFootprint(key, value)
		if err != nil {
			_, why, _ := strings.Cut(err.Error(), ": ")
			return why
		}
		s.Footprints[f.JobID] = f.Nodes
	case strings.HasPrefix(key, store.DrainsPrefix):
		var d domain.DrainRecord
		return decode(value, &d)
	case strings.HasPrefix(key, store.NodeStatePrefix):
		var n domain.NodeState
		return decode(value, &n)
	}
	return ""
}

// checkAllocation says what makes an allocation unusable: one that names
// another job, no attempt, or a placement without nodes cannot be matched
// with its job, claims and assignments.
func checkAllocation(job string, a domain.Allocation) string {
	switch {
	case a.JobID != job:
		return fmt.Sprintf("value is for job %q", a.JobID)
	case a.Attempt < 1:
		return fmt.Sprintf("attempt %d is not positive", a.Attempt)
	case a.State != domain.AllocReserved && a.State != domain.AllocRunning:
		return fmt.Sprintf("state %q is neither reserved nor running", a.State)
	case len(a.Placement.Nodes) == 0:
		return "placement lists no nodes"
	}
	for _, np := range a.Placement.Nodes {
		if np.Node == "" {
			return "placement lists a node without a name"
		}
	}
	return ""
}

func decodeJob(key string, value []byte) (domain.Job, string) {
	var j domain.Job
	if why := decode(value, &j); why != "" {
		return j, why
	}
	switch {
	case j.ID != key:
		return j, fmt.Sprintf("record is for job %q", j.ID)
	case !knownState(j.State):
		return j, fmt.Sprintf("state %q is not a job state", j.State)
	}
	return j, ""
}

func knownState(s domain.State) bool {
	switch s {
	case domain.StatePending, domain.StateReserved, domain.StateRunning:
		return true
	}
	return s.Terminal()
}

// decode says why value is not v's JSON ("" when it is). The error text of
// the decoder names the offending field or offset.
func decode(value []byte, v any) string {
	if err := json.Unmarshal(value, v); err != nil {
		return "undecodable: " + err.Error()
	}
	return ""
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
