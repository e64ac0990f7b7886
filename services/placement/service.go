// Package placement keeps a live view of nodes, free GPUs and pending jobs
// and proposes a placement for every pending job that fits, in queue
// order. It is a singleton elected through etcd: one leader proposes,
// standbys wait. Proposals are only proposals: gang commits them with a
// transaction that re-checks every slot, so a stale view costs a retry,
// never a double booking.
package placement

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// campaignPause and campaignPauseMax bound the pause after a failed
// campaign (see Run).
const (
	campaignPause    = 250 * time.Millisecond
	campaignPauseMax = 30 * time.Second
)

// Run campaigns for leadership and schedules while leader, until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return config.Serve(ctx, "placement", &cfg, func(st *config.Started) error {
		log, cli := st.Log, st.Etcd
		// A standby is ready too: it serves by waiting to lead.
		defer st.Ready(store.NodesPrefix)()
		// lockstep.placement.leader: 1 while this replica schedules, so that
		// a cluster without a leader is seen (every replica at 0).
		var leading atomic.Bool
		defer st.Tel.ObserveLeader(cfg.Component("placement"), leading.Load)()

		// A campaign that fails with its session alive (etcd overloaded,
		// the election prefix denied) is tried again after a pause that
		// doubles up to campaignPauseMax: each try is a lease grant and a
		// revoke, raft writes every standby would otherwise repeat in a
		// tight loop on an etcd already in trouble.
		pause := campaignPause
		for ctx.Err() == nil {
			sess, err := store.OpenSessionRetrying(ctx, cli, cfg.LeaderTTL, log)
			if err != nil {
				return nil // ctx ended
			}
			el, err := sess.Campaign(sess.Context(), store.ElectionKey("placement"), cfg.Instance)
			if err != nil {
				lost := sess.Lost()
				sess.Close()
				switch {
				case ctx.Err() != nil:
				case lost != nil:
					log.Warn("session lost while campaigning", "err", lost)
				default:
					log.Warn("campaign failed; trying again", "err", err, "in", pause)
					clock.Sleep(ctx, pause)
					pause = min(2*pause, campaignPauseMax)
				}
				continue
			}
			pause = campaignPause
			log.Info("placement leader elected", "instance", cfg.Instance)
			// Lead until the session is lost (it ends a fifth of its TTL
			// before etcd could expire it, so no second leader overlaps this
			// one) or ctx ends.
			s := newScheduler(st, cfg)
			stopSweeping := startRetention(sess.Context(), st.Jobs, cfg, log)
			stopJanitor := startJanitor(sess.Context(), st.Bus, log)
			leading.Store(true)
			if err := s.run(sess.Context()); err != nil && ctx.Err() == nil {
				log.Warn("scheduler stopped", "err", err)
			}
			leading.Store(false)
			stopSweeping()
			stopJanitor()
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
	}, config.WithJobs())
}
