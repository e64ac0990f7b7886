package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// watchQueue draws the queue when the job records are first read and
// again whenever they change (a watch of the jobs KV, not polling), until
// ctx ends: an interrupt is how a watch is meant to stop, so it returns
// nil then. On a terminal each drawing replaces the last; elsewhere they
// follow each other, each under a line with its time.
func (a *app) watchQueue(ctx context.Context, c *client.Client, view func([]domain.Job, []string) error) error {
	w, err := c.WatchJobs(ctx)
	if err != nil {
		return err
	}
	tty := isTerminal(a.env.stdout)
	for first := true; ; first = false {
		select {
		case <-ctx.Done():
			return nil
		case <-w.Changed():
		}
		if !a.structured() {
			switch {
			case tty:
				fmt.Fprint(a.env.stdout, "\x1b[H\x1b[2J")
			case !first:
				fmt.Fprintln(a.env.stdout)
			}
			fmt.Fprintf(a.env.stdout, "Jobs at %s (Ctrl-C stops)\n", time.Now().Format("15:04:05"))
		}
		jobs, bad := w.Snapshot()
		if err := view(jobs, bad); err != nil {
			return err
		}
	}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
