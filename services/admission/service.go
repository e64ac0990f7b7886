// Package admission is the entry of every job: it consumes submissions from
// lockstep.v1.jobs.submit and each user's lockstep.v1.jobs.submit.<user>,
// validates them against schemas/jobspec.v1.json, fills defaults, rejects
// gangs the cluster can never hold and those the queue policy refuses their
// owner, records each accepted job in the jobs KV bucket and emits admitted
// or rejected.
//
// A job's owner is the user named by the subject it came on (the NATS
// server lets only that user publish there), never anything in the spec.
//
// Replicas share the durable consumer; a redelivered submission finds the
// record already there and creates nothing. Another submission under an
// existing ID is refused (a refused event on that job), whoever sent it.
package admission

import (
	"context"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// workers is how many submissions one replica admits at once. Each waits
// on two JetStream round trips (the record's create and the admitted
// event), so one at a time capped admission near 1 ÷ 3 ms ≈ 340 jobs/s
// under load. Handling is idempotent and the queue order comes from the
// stream's submission time, so concurrency changes neither.
const workers = 16

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return config.Serve(ctx, "admission", &cfg, func(st *config.Started) error {
		// Ended on return too: a consumer that stopped on its own is an
		// error, and what else runs must not outlive it.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		log, js := st.Log, st.Jobs
		inv := store.InventoryCache(st.Etcd, log)
		go inv.Run(ctx)

		a := &admitter{Started: st, inventory: inv, queues: cfg.Queues, now: cfg.Now}
		// Judge no submission before the inventory is loaded: an empty view
		// admits everything, even gangs no cluster of this size can run.
		select {
		case <-inv.Ready():
		case <-ctx.Done():
			return nil
		}
		// Follow the job records only when some user has a pending-job limit:
		// the replay costs a decode per record in the bucket.
		if needsPendingCount(cfg.Queues) {
			a.pending = pending{active: js.Active(ctx, log), recent: map[string]recentJob{}}
			select {
			case <-a.pending.active.Ready():
			case <-ctx.Done():
				return nil
			}
		}
		done, err := st.Bus.Consume(ctx, bus.ConsumerSpec{
			Stream: subjects.StreamJobs, Durable: subjects.DurableAdmission,
			Filters: []string{subjects.Submit, subjects.SubmitUsers},
			Workers: workers, MaxDeliver: cfg.MaxDeliver, GiveUp: a.giveUp,
		}, log, a.handle)
		if err != nil {
			return errors.Wrap(err, "admission")
		}
		defer st.Ready(store.NodesPrefix)()
		log.Info("admission running")
		return errors.Wrap(bus.WaitConsumers(ctx, cancel, map[string]<-chan struct{}{"submission": done}), "admission")
	}, config.WithJobs())
}
