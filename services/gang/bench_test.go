package gang_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/config"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/jobs"
	"github.com/lockstep-dev/lockstep/shared/jobspec"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/subjects"
	"github.com/lockstep-dev/lockstep/shared/testenv"
)

// gangShape is the benchmark's gang: 2 nodes × 8 GPUs.
const nodesPerGang, gpusPerNode = 2, 8

// setup registers 2n nodes and returns their revisions.
func setup(b *testing.B, env *testenv.Env, prefix string, n int) (map[string]int64, clientv3.LeaseID) {
	ctx := context.Background()
	lease, err := env.Etcd.Grant(ctx, 600)
	if err != nil {
		b.Fatal(err)
	}
	revs := map[string]int64{}
	for i := range n * nodesPerGang {
		name := fmt.Sprintf("%s%05d", prefix, i)
		node := domain.Node{Name: name, Addr: name, GPUs: gpusPerNode, Epoch: int64(lease.ID)}
		resp, err := env.Etcd.Put(ctx, store.NodeKey(name), store.MustJSON(node), clientv3.WithLease(lease.ID))
		if err != nil {
			b.Fatal(err)
		}
		revs[name] = resp.Header.Revision
	}
	return revs, lease.ID
}

func placementFor(prefix string, i int) domain.Placement {
	p := domain.Placement{MasterPort: 29500}
	for k := range nodesPerGang {
		name := fmt.Sprintf("%s%05d", prefix, i*nodesPerGang+k)
		np := domain.NodePlacement{Node: name, NodeRank: k}
		for g := range gpusPerNode {
			np.GPUs = append(np.GPUs, g)
			np.Ranks = append(np.Ranks, domain.Rank{Rank: k*gpusPerNode + g, LocalRank: g, GPUs: []int{g}})
		}
		p.Nodes = append(p.Nodes, np)
	}
	p.MasterAddr = p.Nodes[0].Node
	return p
}

// BenchmarkReservation measures gang reservations per second through the
// real gang service (proposal consumed from JetStream, one etcd Txn, the job
// record updated, reserved event published) beside the raw rate of the
// same-shaped etcd Txn issued directly, on the same embedded etcd with fsync
// on and the same concurrency (the service's default workers). The two are
// measured in alternating rounds so that disk-latency drift hits both alike.
//
//	go test -run '^$' -bench Reservation -benchtime 2000x ./services/gang/
func BenchmarkReservation(b *testing.B) {
	env := testenv.Start(b, testenv.WithFsync())
	ctx := context.Background()
	n := b.N
	const workers = gang.DefaultWorkers
	rounds := min(5, n)

	rawRevs, rawLease := setup(b, env, "raw-", n)
	setup(b, env, "svc-", n)
	js, err := jobs.Open(ctx, env.Bus.JS)
	if err != nil {
		b.Fatal(err)
	}
	props := make([]domain.Proposal, n)
	for i := range n {
		spec := jobspec.Spec{ID: fmt.Sprintf("svc-%d", i), Queue: "default", Command: []string{"true"},
			Gang: jobspec.Gang{Nodes: nodesPerGang, GPUsPerNode: gpusPerNode, TasksPerNode: gpusPerNode}}
		job := domain.Job{ID: spec.ID, Spec: spec, State: domain.StatePending, Attempt: 1}
		if err := js.Create(ctx, job); err != nil {
			b.Fatal(err)
		}
		_, rev, err := js.Get(ctx, job.ID)
		if err != nil {
			b.Fatal(err)
		}
		// As placement sends it: the record and the revision it was read at.
		props[i] = domain.Proposal{JobID: job.ID, Attempt: 1, Placement: placementFor("svc-", i), Job: &job, JobRevision: rev}
	}
	var reserved atomic.Int64
	sub, err := env.Bus.NC.Subscribe(subjects.JobEvent("*", "reserved"), func(*nats.Msg) { reserved.Add(1) })
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = gang.Run(sctx, gang.Config{Base: config.Base{NATSURL: env.NATSURL, Etcd: env.EtcdEndpoint,
			StreamReplicas: 1, Log: slog.New(slog.DiscardHandler)}, ReconcileInterval: time.Hour})
	}()
	testenv.Eventually(b, 30*time.Second, func() error {
		if _, err := env.Bus.JS.Consumer(ctx, subjects.StreamWork, subjects.DurableGang); err != nil {
			return err
		}
		return nil
	})

	b.ResetTimer()
	var rawTime, svcTime time.Duration
	for r := range rounds {
		lo, hi := r*n/rounds, (r+1)*n/rounds

		start := time.Now()
		var next atomic.Int64
		next.Store(int64(lo))
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= hi {
						return
					}
					p := placementFor("raw-", i)
					a := domain.Allocation{JobID: fmt.Sprintf("raw-%d", i), Attempt: 1, State: domain.AllocReserved, Placement: p}
					ok, _, err := store.Reserve(ctx, env.Etcd, a, assignmentsOf(a), rawRevs, rawLease)
					if err != nil || !ok {
						b.Errorf("raw txn %d: ok=%v err=%v", i, ok, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		rawTime += time.Since(start)

		start = time.Now()
		for _, prop := range props[lo:hi] {
			if err := env.Bus.PublishJSON(ctx, subjects.Reserve, "", prop); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for reserved.Load() < int64(hi) {
			if time.Now().After(deadline) {
				b.Fatalf("only %d of %d reserved", reserved.Load(), hi)
			}
			time.Sleep(time.Millisecond)
		}
		svcTime += time.Since(start)
	}
	b.StopTimer()
	raw := float64(n) / rawTime.Seconds()
	ours := float64(n) / svcTime.Seconds()
	b.ReportMetric(raw, "raw-txn/s")
	b.ReportMetric(ours, "reservations/s")
	b.ReportMetric(ours/raw, "ratio")
}

func assignmentsOf(a domain.Allocation) []domain.Assignment {
	var out []domain.Assignment
	for _, np := range a.Placement.Nodes {
		out = append(out, domain.Assignment{JobID: a.JobID, Attempt: 1, Node: np.Node, NodeRank: np.NodeRank,
			NNodes: len(a.Placement.Nodes), WorldSize: a.Placement.WorldSize(), MasterAddr: a.Placement.MasterAddr,
			MasterPort: a.Placement.MasterPort, Ranks: np.Ranks, Command: []string{"true"}})
	}
	return out
}
