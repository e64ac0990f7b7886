package main

import (
	"context"
	"fmt"

	"github.com/lockstep-dev/lockstep/shared/client"
)

func runCancel(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "cancel", "ID [flags]", "Cancel a job: stop every rank, release its GPUs.")
	nats := natsFlag(fs)
	reason := fs.String("reason", "", "why (shown in describe)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("cancel takes one job ID")
	}
	c, err := client.Dial(ctx, *nats)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Job(ctx, pos[0]); err != nil {
		return err
	}
	if err := c.Cancel(ctx, pos[0], *reason); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "cancel requested for %s\n", pos[0])
	return nil
}
