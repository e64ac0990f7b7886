package web

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// maxSamples bounds the cluster page's history (an hour at one a second).
const maxSamples = 3600

// state is what one web replica follows: the etcd prefixes the fabric is
// drawn from, every job record, and the samples taken since it started.
// Each replica follows on its own, so any number can serve.
//
// Which GPUs are taken comes from the allocation records, as placement
// reads them (store.HoldingsCache), not from the claim keys: an
// allocation is written, detached and deleted in the same transactions
// as its claims, and it is one watch event where its claims are one per
// GPU, written three times (50 of a job's 65 key events at load).
type state struct {
	inventory, live *store.Cache[domain.Node]
	nodeState       *store.Cache[domain.NodeState]
	holdings        *store.Cache[store.Holding]

	mu sync.RWMutex
	// jobs are the records of unfinished jobs; ended keeps only what the
	// cluster page shows of each finished one the bucket retains (days of
	// them: a whole record is some kilobytes), and a finished job's page
	// reads its record from the bucket.
	jobs    map[string]domain.Job
	ended   map[string]view.Ended
	samples []view.Sample
}

// newState builds the caches; each change wakes the hub.
func newState(cli *clientv3.Client, log *slog.Logger, h *hub) *state {
	s := &state{
		inventory: store.InventoryCache(cli, log), live: store.NodeCache(cli, log),
		nodeState: store.NodeStateCache(cli, log), holdings: store.HoldingsCache(cli, log),
		jobs: map[string]domain.Job{}, ended: map[string]view.Ended{},
	}
	s.inventory.OnChange = func(string, *domain.Node, *domain.Node) { h.changed() }
	s.live.OnChange = s.inventory.OnChange
	s.nodeState.OnChange = func(string, *domain.NodeState, *domain.NodeState) { h.changed() }
	s.holdings.OnChange = func(string, *store.Holding, *store.Holding) { h.changed() }
	return s
}

// run follows the etcd prefixes until ctx ends.
func (s *state) run(ctx context.Context) {
	go s.inventory.Run(ctx)
	go s.live.Run(ctx)
	go s.nodeState.Run(ctx)
	go s.holdings.Run(ctx)
}

// applyJob takes one entry of the jobs KV. A record that does not decode
// is left out (lockstep check names it), as the services do.
func (s *state) applyJob(log *slog.Logger, e jobs.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, e.Key)
	delete(s.ended, e.Key)
	if e.Deleted {
		return
	}
	j, err := jobs.Decode(e.Key, e.Value)
	switch {
	case err != nil:
		log.Warn("job record skipped", "key", e.Key, "err", err)
	case j.State.Terminal():
		s.ended[e.Key] = view.EndedOf(j)
	default:
		s.jobs[e.Key] = j
	}
}

// job is an unfinished job's record, as last seen.
func (s *state) job(id string) (domain.Job, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs[id]
	return j, ok
}

// jobList is every unfinished job's record, by ID.
func (s *state) jobList() []domain.Job {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := slices.Sorted(maps.Keys(s.jobs))
	out := make([]domain.Job, len(ids))
	for i, id := range ids {
		out[i] = s.jobs[id]
	}
	return out
}

// jobMap copies the unfinished jobs' records.
func (s *state) jobMap() map[string]domain.Job {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.jobs)
}

// endedList is what the cluster page keeps of every finished job.
func (s *state) endedList() []view.Ended {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Collect(maps.Values(s.ended))
}

// fabricInput reads the caches into the fabric page's input.
func (s *state) fabricInput(collapseAbove int) view.FabricInput {
	byName := func(m map[string]domain.Node) map[string]domain.Node {
		out := make(map[string]domain.Node, len(m))
		for _, n := range m {
			out[n.Name] = n // the caches checked that each names the node its key does
		}
		return out
	}
	states := map[string]domain.NodeState{}
	for k, v := range s.nodeState.Snapshot() {
		states[strings.TrimPrefix(k, store.NodeStatePrefix)] = v
	}
	return view.FabricInput{
		Inventory: byName(s.inventory.Snapshot()), Live: byName(s.live.Snapshot()),
		States: states, Claims: gpuClaims(s.holdings.Snapshot()), Jobs: s.jobMap(), CollapseAbove: collapseAbove,
	}
}

// gpuClaims is the claim each allocation holds on each of its GPUs:
// node → GPU index → claim. (The cache checked that no two records name
// the same GPU of a node twice within one; across records gang's
// transaction keeps them apart.)
func gpuClaims(allocs map[string]store.Holding) map[string]map[int]domain.Claim {
	claims := map[string]map[int]domain.Claim{}
	for _, a := range allocs {
		c := domain.Claim{JobID: a.JobID, Attempt: a.Attempt}
		for _, np := range a.Placement.Nodes {
			if claims[np.Node] == nil {
				claims[np.Node] = map[int]domain.Claim{}
			}
			for _, g := range np.GPUs {
				claims[np.Node][g] = c
			}
		}
	}
	return claims
}

// usedGPUs counts the GPUs the allocations hold.
func usedGPUs(allocs map[string]store.Holding) int {
	n := 0
	for _, a := range allocs {
		for _, np := range a.Placement.Nodes {
			n += len(np.GPUs)
		}
	}
	return n
}

// sample records the cluster's totals now: a new sample, or the last one
// replaced when it is less than a second old.
func (s *state) sample(now time.Time) {
	var smp view.Sample
	smp.At = now
	for _, n := range s.live.Snapshot() {
		smp.GPUs += n.GPUs
		smp.UpNodes++
	}
	smp.UsedGPUs = usedGPUs(s.holdings.Snapshot())
	smp.FreeGPUs = smp.GPUs - smp.UsedGPUs
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		switch {
		case j.State == domain.StatePending:
			smp.Pending++
		case j.State.Active():
			smp.Running++
		}
	}
	if n := len(s.samples); n > 0 && now.Sub(s.samples[n-1].At) < time.Second {
		s.samples[n-1] = smp
		return
	}
	if len(s.samples) == maxSamples {
		s.samples = slices.Delete(s.samples, 0, 1)
	}
	s.samples = append(s.samples, smp)
}

// history copies the samples.
func (s *state) history() []view.Sample {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.samples)
}
