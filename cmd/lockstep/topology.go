package main

import (
	"context"
	"fmt"
)

func runTopology(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "topology", "[flags]", "Print the switch tree (core → spine → leaf → node) with free/total GPUs per switch.")
	nats := natsFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("topology takes no arguments")
	}
	c, err := dial(ctx, nats)
	if err != nil {
		return err
	}
	defer c.Close()
	out, err := c.Topology(ctx)
	if err != nil {
		return err
	}
	fmt.Fprint(env.stdout, cleanLines(out))
	return nil
}
