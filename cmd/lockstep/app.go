package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// app is one invocation of the CLI: its streams, its global flags and the
// connections its command opened, which close (close) once the command
// has returned, whatever it returned.
type app struct {
	env     *cliEnv
	globals globals
	closers []func()
}

func newApp(env *cliEnv) *app {
	return &app{env: env}
}

// connection is where the cluster is and how to reach it, from the global
// flags, the environment and the config file, in that order.
func (a *app) connection() (connection.Connection, error) {
	return a.globals.conn.Resolve(os.Getenv)
}

// configFlag is --config as cmd's command line gave it, "" when not.
func (a *app) configFlag(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("config"); f != nil && f.Changed {
		return f.Value.String()
	}
	return ""
}

// dial connects to the cluster's NATS with the connection's credentials.
func (a *app) dial(ctx context.Context) (*client.Client, error) {
	conn, err := a.connection()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(ctx, conn.NATS, conn.BusOptions()...)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, c.Close)
	return c, nil
}

// close closes what the command opened, newest first.
func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// clientRun is the RunE of a command that works on the cluster through
// the client: it dials, then hands the client to run.
func (a *app) clientRun(run func(ctx context.Context, c *client.Client, args []string) error) runE {
	return func(cmd *cobra.Command, args []string) error {
		c, err := a.dial(cmd.Context())
		if err != nil {
			return err
		}
		return run(cmd.Context(), c, args)
	}
}
