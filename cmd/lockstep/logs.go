package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// logsTail is how long `logs -f` keeps reading after the job's record
// says it ended: the agents publish a rank's last lines asynchronously,
// so they may land just after the record.
const logsTail = time.Second

func (a *app) logs(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Print a job's rank output (stdout and stderr), every rank prefixed, or one rank.
		With -f, keep following new output until the job ends.`)
	rank := cmd.Flags().Int("rank", -1, "only this rank (0 .. ranks-1; default: every rank)")
	follow := cmd.Flags().BoolP("follow", "f", false, "keep following new output until the job ends")
	logs := a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
		id := args[0]
		// A job submitted a moment ago is given a moment to be admitted.
		j, err := waitJob(ctx, c, id)
		if err != nil {
			return err
		}
		if n := j.Spec.WithDefaults().Ranks(); *rank >= n {
			return usagef("logs: --rank %d: job %s has %s, 0..%d", *rank, clean(id), plural(n, "rank"), n-1)
		}
		cons, err := c.Logs(ctx, id, *rank)
		if err != nil {
			return err
		}
		defer cons.Close()
		// A job that ran more than once has each line marked with its attempt.
		p := logPrefix{rank: *rank < 0, attempt: j.Attempt > 1}
		var endedAt time.Time // when the record was first seen final
		for {
			n, err := a.printLogs(cons, p)
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
	return func(cmd *cobra.Command, args []string) error {
		if *rank < -1 { // before connecting: the command line is wrong
			return usagef("logs: --rank %d: ranks count from 0", *rank)
		}
		return logs(cmd, args)
	}
}

// logPrefix says what each printed line is marked with: its rank (when
// several ranks are printed), its attempt (when the job ran more than
// once).
type logPrefix struct{ rank, attempt bool }

// printLogs prints the output lines the consumer has now, in the order
// they reached the stream (the order the ranks wrote them in), marked as p
// says, and returns how many it printed.
func (a *app) printLogs(cons jetstream.Consumer, p logPrefix) (int, error) {
	batch, err := cons.FetchNoWait(512)
	if err != nil {
		return 0, err
	}
	n := 0
	for msg := range batch.Messages() {
		n++
		if bus.Replayed(msg.Headers()) {
			continue // a direct get's answer stored on the job's log subject: no rank wrote it
		}
		var marks []string
		// From the bus: only a number is shown. Lines of a later attempt
		// are marked even when the job had one attempt when logs began.
		if at, err := strconv.Atoi(msg.Headers().Get(subjects.HeaderAttempt)); err == nil && (p.attempt || at > 1) {
			marks = append(marks, "attempt "+strconv.Itoa(at))
		}
		if p.rank {
			marks = append(marks, "rank "+clean(subjects.LogRank(msg.Subject())))
		}
		if len(marks) > 0 {
			fmt.Fprintf(a.env.stdout, "[%s] ", strings.Join(marks, " "))
		}
		_, _ = a.env.stdout.Write(msg.Data())
	}
	return n, nil
}
