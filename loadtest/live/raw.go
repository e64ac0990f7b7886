package live

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// RawResult is the raw etcd transaction rate for the load's gang shape.
type RawResult struct {
	Shape   string  `json:"shape"`
	Txns    int     `json:"txns"`
	Workers int     `json:"workers"`
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"perSec"`
}

// rawTxnRate commits n reservation transactions of the given shape
// (store.Reserve: the same compares and puts as gang's, on distinct
// nodes so none conflicts) from workers concurrent clients, under a
// throwaway namespace that nothing else watches, and deletes it after.
func rawTxnRate(ctx context.Context, cli *clientv3.Client, shape trace.Shape, n, workers int, runID string) (RawResult, error) {
	ns := fmt.Sprintf("/lockstep-loadtest/raw/%s/", runID)
	kv := namespace.NewKV(cli.KV, ns)
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = cli.Delete(dctx, ns, clientv3.WithPrefix())
	}()
	lease, err := cli.Grant(ctx, 600)
	if err != nil {
		return RawResult{}, errors.Wrap(err, "raw baseline lease")
	}
	defer func() { _, _ = cli.Revoke(context.Background(), lease.ID) }()

	revs := map[string]int64{}
	var ops []clientv3.Op
	var names []string
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		resp, err := kv.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return errors.Wrap(err, "raw baseline nodes")
		}
		for _, nm := range names {
			revs[nm] = resp.Header.Revision
		}
		ops, names = ops[:0], names[:0]
		return nil
	}
	for i := range n * shape.Nodes {
		name := fmt.Sprintf("raw-%06d", i)
		node := domain.Node{Name: name, Addr: name, GPUs: shape.GPUsPerNode, Epoch: int64(lease.ID)}
		ops = append(ops, clientv3.OpPut(store.NodeKey(name), store.MustJSON(node), clientv3.WithLease(lease.ID)))
		names = append(names, name)
		if len(ops) == 100 {
			if err := flush(); err != nil {
				return RawResult{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return RawResult{}, err
	}

	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				a := rawAllocation(i, shape)
				ok, _, err := store.Reserve(ctx, kv, a, rawAssignments(a), revs, lease.ID)
				if err == nil && !ok {
					err = errors.Newf("raw transaction %d failed its compares", i)
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if firstErr != nil {
		return RawResult{}, firstErr
	}
	return RawResult{Shape: shape.String(), Txns: n, Workers: workers, Seconds: el.Seconds(), PerSec: float64(n) / el.Seconds()}, nil
}

func rawAllocation(i int, shape trace.Shape) domain.Allocation {
	p := domain.Placement{MasterPort: 29500}
	for k := range shape.Nodes {
		name := fmt.Sprintf("raw-%06d", i*shape.Nodes+k)
		np := domain.NodePlacement{Node: name, NodeRank: k}
		for g := range shape.GPUsPerNode {
			np.GPUs = append(np.GPUs, g)
			np.Ranks = append(np.Ranks, domain.Rank{Rank: k*shape.GPUsPerNode + g, LocalRank: g, GPUs: []int{g}})
		}
		p.Nodes = append(p.Nodes, np)
	}
	p.MasterAddr = p.Nodes[0].Node
	// Every GPU of each node, so claimed whole, as gang claims such a gang.
	return domain.Allocation{JobID: fmt.Sprintf("raw-%d", i), Attempt: 1, State: domain.AllocReserved, Placement: p,
		WholeNodes: p.NodeNames()}
}

func rawAssignments(a domain.Allocation) []domain.Assignment {
	var out []domain.Assignment
	for _, np := range a.Placement.Nodes {
		out = append(out, domain.Assignment{JobID: a.JobID, Attempt: 1, Node: np.Node, NodeRank: np.NodeRank,
			NNodes: len(a.Placement.Nodes), WorldSize: a.Placement.WorldSize(), MasterAddr: a.Placement.MasterAddr,
			MasterPort: a.Placement.MasterPort, Ranks: np.Ranks, Command: []string{"sleep", "1"}})
	}
	return out
}
