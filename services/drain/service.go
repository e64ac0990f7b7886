// Package drain stops running gangs that must stop before they finish, and
// makes that stop cheap: it asks every rank to checkpoint, releases the GPUs
// as soon as the acknowledgements are in (or at the grace deadline), and
// requeues the job to resume from its last acknowledged checkpoint.
//
// Triggers: lockstep checkpoint / cancel --checkpoint (lockstep.v1.jobs.drain,
// or drain.<user> from a user: only the job's owner, admins and operators
// are obeyed, others get a refused event),
// preemption (placement publishes drain requests for its victims), node
// drain (etcd nodestate/<node>), and time limits (job records). A plain
// cancel (lockstep.v1.jobs.cancel) stops at once.
//
// Drain state lives in etcd (drains/<job>), so any replica finishes a drain
// another one started; acks are answered by whichever replica receives them.
package drain

import (
	"context"
	"log/slog"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// service is one drain replica: what it watches, and the connections to
// act on it.
type service struct {
	// Log, Tel, Bus, Etcd and Jobs, as config.Start made them.
	*config.Started
	cfg Config
	caches
	// running mirrors the active jobs (time limits, node drains).
	running *runningJobs
}

// caches are the etcd prefixes a drain replica follows.
type caches struct {
	// drains holds every drain in progress (the watch loop ends them);
	// allocs the gangs they stop, decoded when read.
	drains *store.Cache[domain.DrainRecord]
	allocs *store.LazyCache[domain.Allocation]
	// nodeState holds the operators' node drains, inventory the nodes ever
	// registered and live those up now (lockstep node list).
	nodeState *store.Cache[domain.NodeState]
	inventory *store.Cache[domain.Node]
	live      *store.Cache[domain.Node]
}

func newCaches(cli *clientv3.Client, log *slog.Logger) caches {
	return caches{
		drains: store.DrainCache(cli, log), allocs: store.AllocationCache(cli, log),
		nodeState: store.NodeStateCache(cli, log), inventory: store.InventoryCache(cli, log), live: store.NodeCache(cli, log),
	}
}

// run follows every prefix until ctx ends.
func (c caches) run(ctx context.Context) {
	for _, c := range []interface{ Run(context.Context) }{c.drains, c.nodeState, c.allocs, c.inventory, c.live} {
		go c.Run(ctx)
	}
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return config.Serve(ctx, "drain", &cfg, func(st *config.Started) error {
		// Ended on return too: a consumer that stopped on its own is an
		// error, and what else runs must not outlive it.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		log := st.Log
		s := &service{Started: st, cfg: cfg, caches: newCaches(st.Etcd, log), running: newRunningJobs()}
		s.caches.run(ctx)
		go st.Jobs.Follow(ctx, log, jobs.EachEntry(s.running.apply))

		b := st.Bus
		cancelDone, err := b.Consume(ctx, bus.ConsumerSpec{
			Stream: subjects.StreamJobs, Durable: subjects.DurableDrain, Filters: []string{subjects.Cancel, subjects.CancelUsers},
		}, log, decoded(domain.DecodeCancelRequest, s.handleCancel))
		if err != nil {
			return errors.Wrap(err, "drain")
		}
		drainDone, err := b.Consume(ctx, bus.ConsumerSpec{
			Stream: subjects.StreamJobs, Durable: subjects.DurableDrainReqs, Filters: []string{subjects.Drain, subjects.DrainUsers}, Workers: 4,
		}, log, decoded(domain.DecodeDrainRequest, s.handleDrainRequest))
		if err != nil {
			return errors.Wrap(err, "drain")
		}
		nodesDone, err := b.Consume(ctx, bus.ConsumerSpec{
			Stream: subjects.StreamJobs, Durable: subjects.DurableNodeAdmin, Filter: subjects.NodesAll,
		}, log, decoded(domain.DecodeNodeRequest, s.handleNodeRequest))
		if err != nil {
			return errors.Wrap(err, "drain")
		}
		// Acks come from agents, each on its node's subject; the bare subject
		// (no node) is not listened to: an ack must say where it came from.
		sub, err := b.Serve(subjects.CheckpointAcksAll, subjects.QueueDrain, s.handleAck(ctx))
		if err != nil {
			return errors.Wrap(err, "drain: subscribe to acks")
		}
		defer func() { _ = sub.Unsubscribe() }()
		listSub, err := b.Serve(subjects.NodeList, subjects.QueueDrain, s.handleNodeList)
		if err != nil {
			return errors.Wrap(err, "drain: subscribe to node list")
		}
		defer func() { _ = listSub.Unsubscribe() }()
		go s.watchLoop(ctx)
		defer s.Tel.ObserveCluster(s.clusterState)()
		defer st.Ready(store.NodesPrefix)()
		log.Info("drain running")
		return errors.Wrap(bus.WaitConsumers(ctx, cancel, map[string]<-chan struct{}{
			"cancel": cancelDone, "drain request": drainDone, "node request": nodesDone}), "drain")
	}, config.WithJobs())
}
