// Package placement keeps a live view of nodes, free GPUs and pending jobs
// and proposes a placement for every pending job that fits, in queue
// order. It is a singleton elected through etcd: one leader proposes,
// standbys wait. Proposals are only proposals: gang commits them with a
// transaction that re-checks every slot, so a stale view costs a retry,
// never a double booking.
package placement

import (
	"cmp"
	"context"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Config configures a placement replica.
type Config struct {
	config.Base
	// ProposalTimeout is how long a proposal may stay unanswered before the
	// job is considered again.
	ProposalTimeout time.Duration
	// Topology is the operator's switch tree (a topology file); nil means
	// the tree comes from the nodes' labels. Where both exist, the file wins.
	Topology *topology.Topology
	// Queues holds quotas and fair-share weights.
	Queues queue.Config
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Retention is how long the leader keeps a finished job's record in the
	// jobs KV (its events stay in the events stream until that stream's own
	// limit); 0 means jobs.DefaultRetention.
	Retention time.Duration
}

// Validate checks the placement settings.
func (c *Config) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if c.Retention < 0 {
		return errors.Newf("--retention: %s is negative", c.Retention)
	}
	return nil
}

// Defaults fills in the settings left zero (config.Start calls it, after
// Validate).
func (c *Config) Defaults() {
	c.ProposalTimeout = cmp.Or(c.ProposalTimeout, 10*time.Second)
	c.Now = clock.Or(c.Now)
	c.Retention = cmp.Or(c.Retention, jobs.DefaultRetention)
}

// Run campaigns for leadership and schedules while leader, until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	st, err := config.Start(ctx, "placement", &cfg, config.WithJobs())
	if err != nil {
		return err
	}
	defer st.Close()
	log, cli := st.Log, st.Etcd
	// A standby is ready too: it serves by waiting to lead.
	defer st.Ready(store.NodesPrefix)()

	for ctx.Err() == nil {
		sess, err := store.OpenSessionRetrying(ctx, cli, store.DefaultNodeTTL, log)
		if err != nil {
			return nil // ctx ended
		}
		el := sess.Election(store.ElectionKey("placement"))
		if err := el.Campaign(sess.Context(), cfg.Instance); err != nil {
			if lost := sess.Lost(); lost != nil {
				log.Warn("session lost while campaigning", "err", lost)
			}
			sess.Close()
			continue
		}
		log.Info("placement leader elected", "instance", cfg.Instance)
		// Lead until the session is lost (it ends a fifth of its TTL
		// before etcd could expire it, so no second leader overlaps this
		// one) or ctx ends.
		s := newScheduler(st, cfg)
		stopSweeping := startRetention(sess.Context(), st.Jobs, cfg, log)
		if err := s.run(sess.Context()); err != nil && ctx.Err() == nil {
			log.Warn("scheduler stopped", "err", err)
		}
		stopSweeping()
		if lost := sess.Lost(); lost != nil {
			log.Warn("leader session lost; standing down", "err", lost)
		}
		if config.Crashed(ctx) {
			sess.Orphan() // no goodbye: the leader key expires with the lease
			return nil
		}
		resignCtx, rc := context.WithTimeout(context.Background(), 2*time.Second)
		_ = el.Resign(resignCtx)
		rc()
		sess.Close()
	}
	return nil
}
