package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// description is `describe -o json`.
type description struct {
	ID          string            `json:"id"`
	State       domain.State      `json:"state"`
	Reason      string            `json:"reason,omitempty"`
	Detail      string            `json:"detail,omitempty"`
	Attempt     int               `json:"attempt"`
	Restarts    int               `json:"restarts"`
	MaxRestarts int               `json:"maxRestarts"`
	ExitCode    *int              `json:"exitCode,omitempty"`
	SubmittedAt time.Time         `json:"submittedAt"`
	RunningAt   time.Time         `json:"runningAt,omitzero"`
	EndedAt     time.Time         `json:"endedAt,omitzero"`
	Spec        jobspec.Spec      `json:"spec"`
	Placement   *domain.Placement `json:"placement,omitempty"`
	Timing      domain.Timing     `json:"timing"`
	Efficiency  float64           `json:"efficiency"`
	Events      []events.Event    `json:"events"`
	TraceID     string            `json:"traceId,omitempty"`
	Owner       string            `json:"owner,omitempty"`
}

func (a *app) describeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe ID",
		Short: "show a job: spec, placement per rank, event timeline",
		Long:  "Show a job: state, spec, placement per rank and its event timeline.",
		Args:  args(1, "job ID"),
		RunE: a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
			j, err := c.Job(ctx, args[0])
			if err != nil {
				return err
			}
			evs, err := c.Events(ctx, j.ID)
			if errors.Is(err, client.ErrNotYours) {
				// The record is everyone's to read (as squeue's); the events are
				// the owner's.
				fmt.Fprintf(a.env.stderr, "lockstep: %s\n", clean(err.Error()))
			} else if err != nil {
				return err
			}
			d := description{
				ID: j.ID, State: j.State, Reason: j.Reason, Detail: j.Detail, Attempt: j.Attempt, Restarts: j.Restarts,
				MaxRestarts: j.Spec.MaxRestarts(), ExitCode: j.ExitCode, SubmittedAt: j.SubmittedAt,
				RunningAt: j.RunningAt, EndedAt: j.EndedAt, Spec: j.Spec, Placement: j.Placement, Events: evs,
				Timing: j.Timing, Efficiency: j.Timing.Efficiency(), TraceID: j.TraceID, Owner: j.Owner,
			}
			if d.Events == nil {
				d.Events = []events.Event{}
			}
			// Stream order is publication order; services publish after their
			// commits, so two services' events can land out of time order.
			sort.SliceStable(d.Events, func(a, b int) bool { return d.Events[a].Time.Before(d.Events[b].Time) })
			if a.wantJSON() {
				return writeJSON(a.env, d)
			}
			printDescription(a.env.stdout, d)
			return nil
		}),
	}
	return takes(cmd, groupNATS, groupOutput)
}

func printDescription(w io.Writer, d description) {
	fmt.Fprintf(w, "Job:        %s (%s)\n", clean(d.ID), clean(d.Spec.Name))
	fmt.Fprintf(w, "State:      %s", clean(string(d.State)))
	if d.Reason != "" {
		fmt.Fprintf(w, " — %s", clean(d.Reason))
	}
	fmt.Fprintln(w)
	if d.Detail != "" {
		fmt.Fprintf(w, "Why:        %s\n", clean(d.Detail))
	}
	if d.Owner != "" {
		fmt.Fprintf(w, "Owner:      %s\n", clean(d.Owner))
	}
	fmt.Fprintf(w, "Queue:      %s (priority %d)\n", clean(d.Spec.Queue), d.Spec.Priority)
	fmt.Fprintf(w, "Gang:       %d nodes × %d GPUs, %d ranks per node\n", d.Spec.Gang.Nodes, d.Spec.Gang.GPUsPerNode, d.Spec.Gang.TasksPerNode)
	fmt.Fprintf(w, "Command:    %s\n", clean(strings.Join(d.Spec.Command, " ")))
	fmt.Fprintf(w, "Attempt:    %d (restarts %d of %d)\n", d.Attempt, d.Restarts, d.MaxRestarts)
	if d.ExitCode != nil {
		fmt.Fprintf(w, "Exit code:  %d\n", *d.ExitCode)
	}
	fmt.Fprintf(w, "Submitted:  %s\n", d.SubmittedAt.Local().Format(time.RFC3339))
	if !d.RunningAt.IsZero() {
		fmt.Fprintf(w, "Running:    %s (%s after submit)\n", d.RunningAt.Local().Format(time.RFC3339), d.RunningAt.Sub(d.SubmittedAt).Round(time.Millisecond))
	}
	if d.TraceID != "" {
		fmt.Fprintf(w, "Trace:      %s (lockstep trace %s)\n", clean(d.TraceID), clean(d.ID))
	}
	if t := d.Timing; t.Compute > 0 || t.SchedLatency > 0 {
		fmt.Fprintf(w, "Efficiency: η %.3f = compute %s / (compute + scheduling %s + checkpoint drain %s); gang wait %s\n",
			d.Efficiency, t.Compute.Round(time.Millisecond), t.SchedLatency.Round(time.Millisecond),
			t.Drain.Round(time.Millisecond), t.GangWait.Round(time.Millisecond))
	}
	if d.Placement != nil {
		fmt.Fprintf(w, "\nPlacement:  master %s:%d, leaves %s\n", clean(d.Placement.MasterAddr), d.Placement.MasterPort, clean(strings.Join(d.Placement.Leaves, ",")))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  RANK\tNODE\tNODE_RANK\tLOCAL_RANK\tGPUS")
		for _, np := range d.Placement.Nodes {
			for _, r := range np.Ranks {
				fmt.Fprintf(tw, "  %d\t%s\t%d\t%d\t%s\n", r.Rank, clean(np.Node), np.NodeRank, r.LocalRank, ints(r.GPUs))
			}
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w, "\nEvents:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, ev := range d.Events {
		fmt.Fprintf(tw, "  %s\t+%s\t%s\t%s\n", ev.Time.Local().Format("15:04:05.000"),
			ev.Time.Sub(d.SubmittedAt).Round(time.Millisecond), clean(string(ev.Type)), eventDetail(ev))
	}
	_ = tw.Flush()
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
