// Package gang turns placement proposals into all-or-nothing reservations
// and owns every allocation until it is released.
//
//   - reserve: one etcd transaction compares every GPU claim, the
//     MASTER_PORT claim, each node's registration and the job's allocation
//     key, and writes all of them plus one assignment per node under a
//     reservation lease — or writes nothing and reports the conflict.
//   - launch barrier: agents report ranks started; when every node has, the
//     allocation is rewritten without the lease (durable for the job's
//     life). A gang not running by its launch deadline is released and
//     requeued.
//   - completion: agents report exits; the first failed rank fails the gang
//     and releases it everywhere (agents stop ranks whose assignment is
//     gone); all ranks done with 0 is success.
//   - recovery: a node whose lease expires takes its gangs down with it;
//     lost or expired allocations are requeued under the job's restart
//     policy. Every replica watches and reconciles; transactions and KV
//     compare-and-set make the work idempotent.
package gang

import (
	"context"
	"sync"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

type service struct {
	// Log, Tel, Bus, Etcd and Jobs, as config.Start made them.
	*config.Started
	cfg Config
	// records follows the job records: briefs of the unfinished ones for
	// the reconciler, whole records of the pending ones for proposals
	// (their spec, the command the agents run, comes from there or from
	// the KV, never from the message).
	records *jobs.Active
	// counters count refused proposals and malformed allocations.
	counters counters
	// leases lends each reservation its own etcd lease.
	leases *store.LeasePool
	// txns group-commits the hot path's transactions: reservations,
	// report progress and the launch barrier, releases (store.GroupKV).
	txns *store.GroupKV
	// nodes mirrors node registrations (for reservation compares and node
	// loss); nodeStates the operators' node drains (a drained node gets no
	// new gang).
	nodes      *store.Cache[domain.Node]
	nodeStates *store.Cache[domain.NodeState]
	// ranks follows the jobs waiting for an earlier attempt's ranks to end.
	ranks *rankWaits
	// reports is the report path's memory (see replicaState).
	reports     *replicaState
	replicaOnce sync.Once
	// footprintsMissing is when each footprint's job was first found
	// without a record, by the reconciler's passes (footprints.go).
	footprintsMissing map[string]time.Time
}

// groupCommitters is how many group commits (store.GroupKV) one replica
// keeps in flight: enough that one waiting on etcd's disk does not hold up
// the next group, few enough that groups form under load.
const groupCommitters = 4

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return config.Serve(ctx, "gang", &cfg, func(st *config.Started) error {
		ctrs, err := newCounters(st.Tel.Meter)
		if err != nil {
			return err
		}
		log, cli := st.Log, st.Etcd
		s := &service{Started: st, cfg: cfg, records: st.Jobs.Active(ctx, log, jobs.WithPending()), counters: ctrs}
		// The replica's leases hold its reservations until they pass the
		// launch barrier, one lease per reservation (store.LeasePool says
		// why). They all end with this replica; a lost one loses its
		// reservations to the reconciler.
		s.leases = store.NewLeasePool(ctx, cli, cfg.ReservationTTL, log)
		s.txns = store.NewGroupKV(ctx, cli, groupCommitters)
		for ctx.Err() == nil {
			if err := s.serve(ctx); err != nil && ctx.Err() == nil {
				log.Warn("gang stopped, restarting", "err", err)
				clock.Sleep(ctx, time.Second)
			}
		}
		return nil
	}, config.WithJobs())
}

// serve runs the consumers, the node watch and the reconciler until ctx
// ends or a consumer stops. Everything it starts runs on a context of its
// own, ended (and the consumers and the reconciler waited for) when it
// returns: the next serve replaces the caches they read.
func (s *service) serve(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	b, cli, log := s.Bus, s.Etcd, s.Log
	s.nodes = store.NodeCache(cli, log)
	s.nodes.OnChange = func(key string, val, prev *domain.Node) {
		if val == nil && prev != nil {
			go s.nodeDown(ctx, *prev)
		}
	}
	s.nodeStates = store.NodeStateCache(cli, log)
	s.ranks = newRankWaits(ctx, cli, log, s.ranksEnded)
	go s.nodes.Run(ctx)
	go s.nodeStates.Run(ctx)
	for _, ready := range []<-chan struct{}{s.nodes.Ready(), s.nodeStates.Ready()} {
		select {
		case <-ready:
		case <-ctx.Done():
			return nil
		}
	}
	// Proposals and reports come back from a replica that died holding
	// them (fetched, unacknowledged: up to 64) after the ack wait; one
	// still being handled is not redelivered (the bus says it is in
	// progress). At the default 30 s a proposal held by a killed replica
	// kept its job waiting 30 s (placement's re-proposal after its 10 s
	// timeout has the same ID, which the stream drops as a duplicate), and
	// a gang whose started report it held could run, exit and finish
	// before anyone recorded it running. Either handled twice changes
	// nothing the second time.
	reserveDone, err := b.Consume(ctx, bus.ConsumerSpec{
		Stream: subjects.StreamWork, Durable: subjects.DurableGang, Filter: subjects.Reserve, Workers: s.cfg.Workers,
		AckWait: workAckWait,
	}, log, s.handleProposal)
	if err != nil {
		return err
	}
	reportDone, err := b.Consume(ctx, bus.ConsumerSpec{
		Stream: subjects.StreamWork, Durable: subjects.DurableReports, Filter: subjects.ReportsAll, Workers: s.cfg.Workers,
		AckWait: workAckWait,
	}, log, s.handleReport)
	if err != nil {
		cancel()
		<-reserveDone
		return err
	}
	reconciled := make(chan struct{})
	go func() {
		defer close(reconciled)
		s.reconcileLoop(ctx)
	}()
	defer s.Ready(store.NodesPrefix)()
	log.Info("gang running")
	err = bus.WaitConsumers(ctx, cancel, map[string]<-chan struct{}{"reserve": reserveDone, "report": reportDone})
	cancel() // WaitConsumers ends ctx only when a consumer stopped on its own
	<-reconciled
	return errors.Wrap(err, "gang")
}

// workAckWait is how long a proposal or report may be in flight at a
// replica without word from it before the server hands it to another.
const workAckWait = 10 * time.Second
