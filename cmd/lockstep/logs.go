package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// logsTail is how long `logs -f` keeps reading after the job's record
// says it ended: the agents publish a rank's last lines asynchronously,
// so they may land just after the record.
const logsTail = time.Second

func (a *app) logs(cmd *cobra.Command) runE {
	cmd.Long = "Print a job's rank output (stdout and stderr), every rank prefixed, or one rank.\n" +
		"With -f, keep following new output until the job ends."
	rank := cmd.Flags().Int("rank", -1, "only this rank")
	follow := cmd.Flags().BoolP("follow", "f", false, "keep following new output until the job ends")
	return a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
		id := args[0]
		// A job submitted a moment ago is given a moment to be admitted.
		if _, err := waitJob(ctx, c, id); err != nil {
			return err
		}
		cons, err := c.Logs(ctx, id, *rank)
		if err != nil {
			return err
		}
		var endedAt time.Time // when the record was first seen final
		for {
			n, err := a.printLogs(cons, *rank < 0)
			if err != nil || n > 0 {
				if err != nil {
					return err
				}
				continue
			}
			if !*follow {
				return nil
			}
			if endedAt.IsZero() {
				if j, err := c.Job(ctx, id); err == nil && j.State.Terminal() {
					endedAt = time.Now()
				}
			} else if time.Since(endedAt) > logsTail {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
}

// printLogs prints the output lines the consumer has now, prefixed with
// their rank when prefix, and returns how many it printed.
func (a *app) printLogs(cons jetstream.Consumer, prefix bool) (int, error) {
	batch, err := cons.FetchNoWait(512)
	if err != nil {
		return 0, err
	}
	n := 0
	for msg := range batch.Messages() {
		n++
		if prefix {
			fmt.Fprintf(a.env.stdout, "[rank %s] ", clean(subjects.LogRank(msg.Subject())))
		}
		_, _ = a.env.stdout.Write(msg.Data())
	}
	return n, nil
}
