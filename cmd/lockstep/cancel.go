package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

func (a *app) cancelCmd() *cobra.Command {
	var reason string
	var checkpoint bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "cancel a job",
		Long:  "Cancel a job: stop every rank, release its GPUs.",
		Args:  args(1, "job ID"),
		RunE: a.jobRequest("cancel", func(ctx context.Context, c *client.Client, id string) error {
			if !checkpoint {
				return c.Cancel(ctx, id, reason)
			}
			r := reason
			if r == "" {
				r = "cancelled by user after a checkpoint"
			}
			return c.Drain(ctx, id, domain.DrainCancel, domain.ThenCancel, r)
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (shown in describe)")
	cmd.Flags().BoolVar(&checkpoint, "checkpoint", false, "let a running job checkpoint first (its grace period), then cancel")
	return takes(cmd, groupNATS)
}

// jobRequest is the RunE of a request about one job (the argument): it
// waits for the job to be known, asks, and says what it asked.
func (a *app) jobRequest(what string, ask func(ctx context.Context, c *client.Client, id string) error) func(*cobra.Command, []string) error {
	return a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
		id := args[0]
		if _, err := waitJob(ctx, c, id); err != nil {
			return err
		}
		if err := ask(ctx, c, id); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "%s requested for %s\n", what, clean(id))
		return nil
	})
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
