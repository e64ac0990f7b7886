// Package web is the dashboard: a service like the others (any number of
// replicas, no state of its own) that follows the nodes, allocations and
// node drains in etcd, the jobs KV and the events stream, and serves the
// fabric, queue, job and cluster pages as server-rendered HTML. Open pages
// stay current through Server-Sent Events: each change a watch delivers
// re-renders the page's live part and sends it (see hub). The view models
// are pure functions in services/web/view.
//
// Access: bound to loopback by default (CheckListen). Without the
// cluster's auth the dashboard is read-only. With it, every page needs a
// signed-in identity (a token `lockstep web token` makes from the
// viewer's creds, see token.go), events and output are shown as the bus
// would let that identity read them, and cancel and checkpoint are sent
// on the identity's own subjects, so the drain service judges them as it
// judges the CLI's.
package web

import (
	"context"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Run serves the dashboard until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return config.Serve(ctx, "web", &cfg, func(st *config.Started) error {
		var verify *verifier
		if cfg.Creds != "" {
			creds, err := os.ReadFile(cfg.Creds)
			if err != nil {
				return errors.Wrap(err, "web credentials")
			}
			if verify, err = newVerifier(creds); err != nil {
				return err
			}
		}
		h := newHub()
		s := &server{Started: st, cfg: cfg, hub: h, state: newState(st.Etcd, st.Log, h), verify: verify, pages: mustPages(),
			streams: newStreamSlots(maxStreamsPerViewer, maxStreams)}
		s.state.run(ctx)
		go st.Jobs.Follow(ctx, st.Log, jobs.EachEntry(func(e jobs.Entry) {
			s.state.applyJob(st.Log, e)
			h.changed()
		}))
		// Every event (a job's timeline, a node's) wakes the pages; the
		// records and etcd say what changed.
		sub, err := st.Bus.NC.Subscribe(subjects.EventsAll, func(*nats.Msg) { h.changed() })
		if err != nil {
			return errors.Wrap(err, "web: subscribe to events")
		}
		defer func() { _ = sub.Unsubscribe() }()
		go h.run(ctx, func() { s.state.sample(cfg.Now()) })

		ln := cfg.Listener
		if ln == nil {
			if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
				return errors.Wrap(err, "web: --listen")
			}
		}
		srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		defer st.Ready(store.NodesPrefix)()
		st.Log.Info("web serving", "addr", ln.Addr().String())
		select {
		case <-ctx.Done():
		case err := <-served:
			return errors.Wrap(err, "web: serve")
		}
		// Open event streams end with ctx (their requests' base context);
		// Close then drops whatever is left.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		return nil
	}, config.WithJobs(), config.WithoutStreams())
}
