package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func (a *app) queueCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "list jobs, like squeue",
		Long:  "List jobs (pending and running; -a for all), oldest first.",
		Args:  args(0, ""),
		RunE: a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
			jobs, err := a.jobs(ctx, c)
			if err != nil {
				return err
			}
			shown := jobs[:0]
			for _, j := range jobs {
				if all || !j.State.Terminal() {
					shown = append(shown, j)
				}
			}
			sort.Slice(shown, func(a, b int) bool {
				if !shown[a].SubmittedAt.Equal(shown[b].SubmittedAt) {
					return shown[a].SubmittedAt.Before(shown[b].SubmittedAt)
				}
				return shown[a].ID < shown[b].ID
			})
			if a.wantJSON() {
				rows := make([]queueRow, len(shown))
				for i, j := range shown {
					rows[i] = rowOf(j)
				}
				return writeJSON(a.env, rows)
			}
			tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tQUEUE\tSTATE\tNODESxGPUS\tAGE\tREASON")
			now := time.Now()
			for _, j := range shown {
				r := rowOf(j)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clean(r.ID), clean(r.Name), clean(r.Queue), clean(string(r.State)), r.Shape,
					age(now.Sub(j.SubmittedAt)), clean(r.Reason))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include finished jobs")
	return takes(cmd, groupNATS, groupOutput)
}

type queueRow struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Queue       string       `json:"queue"`
	State       domain.State `json:"state"`
	Shape       string       `json:"shape"`
	Priority    int          `json:"priority"`
	SubmittedAt time.Time    `json:"submittedAt"`
	Reason      string       `json:"reason,omitempty"`
}

func rowOf(j domain.Job) queueRow {
	return queueRow{
		ID: j.ID, Name: j.Spec.Name, Queue: j.Spec.Queue, State: j.State, Priority: j.Spec.Priority,
		Shape:       fmt.Sprintf("%dx%d", j.Spec.Gang.Nodes, j.Spec.Gang.GPUsPerNode),
		SubmittedAt: j.SubmittedAt, Reason: j.Reason,
	}
}

// jobs reads every job record. It names those that could not be read
// (see `lockstep check`) on stderr, so that -o json stays parseable.
func (a *app) jobs(ctx context.Context, c *client.Client) ([]domain.Job, error) {
	jobs, bad, err := c.Jobs(ctx)
	for _, k := range bad {
		fmt.Fprintf(a.env.stderr, "lockstep: job record %s is malformed; skipped (lockstep check names what is wrong)\n", clean(k))
	}
	return jobs, err
}

// age renders a duration like squeue's TIME column.
func age(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// writeJSON prints v as indented JSON.
func writeJSON(env *cliEnv, v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
