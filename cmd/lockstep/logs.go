package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

func (a *app) logsCmd() *cobra.Command {
	var rank int
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "print a job's rank output",
		Long:  "Print a job's rank output (stdout and stderr), every rank prefixed, or one rank.",
		Args:  args(1, "job ID"),
		RunE: a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
			id, w := args[0], a.env.stdout
			if _, err := c.Job(ctx, id); err != nil {
				return err
			}
			cons, err := c.Logs(ctx, id, rank)
			if err != nil {
				return err
			}
			prefix := rank < 0
			for {
				batch, err := cons.FetchNoWait(512)
				if err != nil {
					return err
				}
				n := 0
				for msg := range batch.Messages() {
					n++
					if prefix {
						fmt.Fprintf(w, "[rank %s] ", clean(subjects.LogRank(msg.Subject())))
					}
					_, _ = w.Write(msg.Data())
				}
				if n > 0 {
					continue
				}
				if !follow {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(200 * time.Millisecond):
				}
			}
		}),
	}
	cmd.Flags().IntVar(&rank, "rank", -1, "only this rank")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep following new output")
	return takes(cmd, groupNATS)
}
