package web

import (
	"net"
	"net/netip"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// DefaultListen is where the dashboard listens unless told otherwise: this
// machine only.
const DefaultListen = "127.0.0.1:8080"

// Config is the web service's configuration.
type Config struct {
	config.Base
	// Listen is the dashboard's address (default DefaultListen); Listener,
	// when set, is used instead (a caller that must know the port before
	// the service starts: `lockstep dev`, tests).
	Listen   string
	Listener net.Listener
	// AllowRemote lets the dashboard listen beyond loopback on a cluster
	// without auth, where anyone who reaches it sees every job.
	AllowRemote bool
	// Queues is the queue policy: the queue page lists pending jobs in its
	// order.
	Queues queue.Config
	// CollapseAbove folds the fabric page's leaves above this many nodes
	// (0: view.DefaultCollapseAbove).
	CollapseAbove int
}

// Validate checks the settings: the common ones, then the address.
func (c *Config) Validate() error {
	addr := c.Listen
	if c.Listener != nil {
		addr = c.Listener.Addr().String()
	}
	return c.ValidateWith(CheckListen(addr, c.Creds != "", c.AllowRemote))
}

// Defaults fills in the address.
func (c *Config) Defaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
}

// CheckListen refuses an address beyond loopback unless the cluster's auth
// is on (every page then needs a signed-in identity) or the operator said
// so (allowRemote). An empty host means every interface, so it counts as
// remote; "localhost" is loopback. An empty address is the default.
func CheckListen(addr string, authOn, allowRemote bool) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.Wrapf(err, "--listen %q", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	if authOn || allowRemote {
		return nil
	}
	return errors.WithHint(errors.Newf("--listen %q: not a loopback address, and the cluster has no auth: anyone who reaches it would see every job", addr),
		"listen on 127.0.0.1, run with the cluster's credentials (auth on: every page needs a sign-in), or pass --allow-remote")
}
