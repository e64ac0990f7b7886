package web

import (
	"net"
	"net/netip"
	"net/url"
	"strings"

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
	// PublicHosts are the host names a dashboard without auth answers for,
	// besides loopback and IP addresses (with AllowRemote; see
	// server.routes).
	PublicHosts []string
	// Queues is the queue policy: the queue page lists pending jobs in its
	// order.
	Queues queue.Config
	// CollapseAbove folds the fabric page's leaves above this many nodes
	// (0: view.DefaultCollapseAbove).
	CollapseAbove int
	// SpanFile is a span file (`lockstep dev`'s spans.jsonl) the job page
	// draws the job's trace from; "" for none.
	SpanFile string
	// TraceURL links a job's trace in a collector's UI, "{trace}" standing
	// for the trace ID (Jaeger: http://HOST:16686/trace/{trace}); "" for
	// none.
	TraceURL string
}

// Validate checks the settings: the common ones, then the address.
func (c *Config) Validate() error {
	addr := c.Listen
	if c.Listener != nil {
		addr = c.Listener.Addr().String()
	}
	var hosts error
	if len(c.PublicHosts) > 0 && (!c.AllowRemote || c.Creds != "") {
		hosts = errors.New("--public-host: only with --allow-remote, on a cluster without auth (with auth every page needs a sign-in, whatever the host)")
	}
	for _, h := range c.PublicHosts {
		// Compared with a request's Host less its port: a name with a
		// port, or none at all (a request without Host), would never
		// match, or match what it should not.
		if h == "" || strings.ContainsAny(h, ":/ ") {
			hosts = errors.CombineErrors(hosts, errors.Newf("--public-host: %q is not a host name (no port, no scheme)", h))
		}
	}
	return c.ValidateWith(CheckListen(addr, c.Creds != "", c.AllowRemote), CheckTraceURL(c.TraceURL), hosts)
}

// CheckTraceURL accepts "" or an http(s) URL with a "{trace}" placeholder.
func CheckTraceURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(strings.ReplaceAll(raw, "{trace}", "0"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.Newf("--trace-url %q: want an http(s) URL", raw)
	}
	if !strings.Contains(raw, "{trace}") {
		return errors.Newf("--trace-url %q: want {trace} where the trace ID goes", raw)
	}
	return nil
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
	if isLoopback(host) || authOn || allowRemote {
		return nil
	}
	return errors.WithHint(errors.Newf("--listen %q: not a loopback address, and the cluster has no auth: anyone who reaches it would see every job", addr),
		"listen on 127.0.0.1, run with the cluster's credentials (auth on: every page needs a sign-in), or pass --allow-remote")
}

// isLoopback reports whether host (a name or an address, without a port)
// names this machine's loopback: localhost, or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
