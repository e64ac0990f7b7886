package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

func runCancel(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "cancel", "ID [flags]", "Cancel a job: stop every rank, release its GPUs.")
	nats := natsFlag(fs)
	reason := fs.String("reason", "", "why (shown in describe)")
	checkpoint := fs.Bool("checkpoint", false, "let a running job checkpoint first (its grace period), then cancel")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("cancel takes one job ID")
	}
	c, err := dial(ctx, nats)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := waitJob(ctx, c, pos[0]); err != nil {
		return err
	}
	if *checkpoint {
		r := *reason
		if r == "" {
			r = "cancelled by user after a checkpoint"
		}
		if err := c.Drain(ctx, pos[0], domain.DrainCancel, domain.ThenCancel, r); err != nil {
			return err
		}
	} else if err := c.Cancel(ctx, pos[0], *reason); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "cancel requested for %s\n", clean(pos[0]))
	return nil
}

// waitJob reads a job, giving one submitted a moment ago a little time to
// be admitted before calling its ID unknown.
func waitJob(ctx context.Context, c *client.Client, id string) (domain.Job, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		j, err := c.Job(ctx, id)
		if err == nil || !errs.IsNotFound(err) || time.Now().After(deadline) {
			return j, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
