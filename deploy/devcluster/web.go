package devcluster

import (
	"context"
	"net"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/web"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// startWeb listens on addr (so that a busy port fails Start, and ":0" is
// known at once) and runs the dashboard there. With auth it connects as
// admin: it reads every job's events and output, and sends a viewer's
// cancel or checkpoint on that viewer's own subjects, where the drain
// service judges it.
func (c *Cluster) startWeb(addr string) error {
	// Refused here rather than by the service once it starts, after the
	// banner: `lockstep dev --insecure --web-listen 0.0.0.0:8080` fails.
	if err := web.CheckListen(addr, c.auth != nil, false); err != nil {
		return errors.Wrap(err, "--web-listen")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.WithHint(errors.Wrap(err, "--web-listen"), "is another `lockstep dev` running? pick another --web-listen")
	}
	c.webAddr = ln.Addr().String()
	first := ln
	c.add("web-1", func(ctx context.Context) error {
		b, err := c.serviceBase(auth.RoleAdmin, "dev-1")
		if err != nil {
			return err
		}
		// A restarted instance listens again where the first one did.
		cfg := web.Config{Base: b, Listen: c.webAddr, Listener: first, Queues: c.cfg.Queues}
		if !c.cfg.NoSpanFile {
			cfg.SpanFile = SpanFile(c.cfg.DataDir)
		}
		first = nil
		return web.Run(ctx, cfg)
	})
	return nil
}

// WebAddr is the dashboard's address ("" when Config.WebListen was empty).
func (c *Cluster) WebAddr() string { return c.webAddr }
