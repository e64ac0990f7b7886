package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

func runLogs(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "logs", "ID [flags]", "Print a job's rank output (stdout and stderr), every rank prefixed, or one rank.")
	nats := natsFlag(fs)
	rank := fs.Int("rank", -1, "only this rank")
	follow := fs.Bool("f", false, "keep following new output")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("logs takes one job ID")
	}
	c, err := dial(ctx, nats)
	if err != nil {
		return err
	}
	defer c.Close()
	id := pos[0]
	if _, err := c.Job(ctx, id); err != nil {
		return err
	}
	cons, err := c.Logs(ctx, id, *rank)
	if err != nil {
		return err
	}
	prefix := *rank < 0
	for {
		batch, err := cons.FetchNoWait(512)
		if err != nil {
			return err
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			if prefix {
				fmt.Fprintf(env.stdout, "[rank %s] ", clean(subjects.LogRank(msg.Subject())))
			}
			_, _ = env.stdout.Write(msg.Data())
		}
		if n > 0 {
			continue
		}
		if !*follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}
