package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/client"
	"github.com/lockstep-dev/lockstep/shared/errs"
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
	// A job submitted a moment ago may not be admitted yet; give it a
	// little time before calling the ID unknown.
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, err := c.Job(ctx, pos[0])
		if err == nil {
			break
		}
		if !errs.IsNotFound(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.Cancel(ctx, pos[0], *reason); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "cancel requested for %s\n", pos[0])
	return nil
}
