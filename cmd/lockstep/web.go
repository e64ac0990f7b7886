//go:build !lockstep_client

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/services/web"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// webCommands are web's subcommands.
var webCommands = []command{
	{"", "token", "print a dashboard sign-in token made from your credentials (--creds)", args(0, ""), onNATS, (*app).webToken},
}

func (a *app) web(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Serve the dashboard: the fabric, the queue, every job and the cluster, kept live
		by Server-Sent Events. Read-only and on 127.0.0.1 by default; with the cluster's
		credentials (auth on) every page needs a sign-in (` + "`lockstep web token`" + `) and
		cancel and checkpoint act as the signed-in identity.`)
	var b config.Base
	a.service(cmd, &b)
	fs := cmd.Flags()
	// The dashboard declares no stream (config.WithoutStreams): their
	// settings are the services'.
	streamFlags := []string{"stream-replicas", "history-retention", "readers-per-stream", "events-max-bytes", "history-max-bytes"}
	for _, name := range streamFlags {
		_ = fs.MarkHidden(name)
	}
	listen := fs.String("listen", web.DefaultListen, "serve the dashboard on this address (beyond loopback only with auth or --allow-remote)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --listen on a cluster without auth, where anyone who reaches it sees every job")
	publicHosts := fs.StringSlice("public-host", nil, "with --allow-remote: host names the dashboard is reached by (besides IP addresses and localhost); a request naming any other is refused, so that a page elsewhere rebinding its own name to this address reads nothing")
	traceURL := fs.String("trace-url", "", "link each job page to its trace in a collector's UI, {trace} standing for the trace ID (e.g. http://jaeger:16686/trace/{trace})")
	queues := queuesFlag(fs, "the queue page lists pending jobs in its order")
	a.add(cmd, webCommands)
	return func(cmd *cobra.Command, _ []string) error {
		for _, name := range streamFlags {
			if fs.Changed(name) {
				return usagef("--%s: the dashboard declares no stream; set it on the services", name)
			}
		}
		q, err := queues()
		if err != nil {
			return err
		}
		return a.serve(cmd.Context(), b, "web", func(b config.Base) error {
			return web.Run(cmd.Context(), web.Config{Base: b, Listen: *listen, AllowRemote: *allowRemote, PublicHosts: *publicHosts, Queues: q, TraceURL: *traceURL})
		})
	}
}

// webToken prints a sign-in token for the identity the caller's creds
// name. It connects to nothing: the token is signed with the creds' own
// key, and the dashboard checks it against the cluster's account.
func (a *app) webToken(cmd *cobra.Command) runE {
	ttl := cmd.Flags().Duration("ttl", 12*time.Hour, fmt.Sprintf("how long the token is valid (at most %s)", web.MaxTokenTTL))
	return func(*cobra.Command, []string) error {
		conn, err := a.connection()
		if err != nil {
			return err
		}
		if conn.Creds == "" {
			return usagef("web token: no credentials: pass --creds FILE (or set LOCKSTEP_CREDS, or a context); a cluster without auth needs no sign-in")
		}
		creds, err := os.ReadFile(conn.Creds)
		if err != nil {
			return errors.Wrap(err, "--creds")
		}
		token, err := web.IssueToken(creds, *ttl, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintln(a.env.stdout, token)
		return nil
	}
}
