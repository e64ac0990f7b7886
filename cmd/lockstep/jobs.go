package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func (a *app) queue(cmd *cobra.Command) runE {
	cmd.Long = "List jobs (pending and running; -a for all), oldest first. How many rejected\n" +
		"jobs are not shown is said on stderr."
	all := cmd.Flags().BoolP("all", "a", false, "include finished jobs")
	return a.jobsRun(func(jobs []domain.Job) error {
		shown, rejected := jobs[:0], 0
		for _, j := range jobs {
			if *all || !j.State.Terminal() {
				shown = append(shown, j)
			} else if j.State == domain.StateRejected {
				rejected++
			}
		}
		if rejected > 0 {
			// On stderr, so that -o json stays parseable.
			fmt.Fprintf(a.env.stderr, "lockstep: %s not shown (lockstep queue -a shows them; describe ID says why)\n",
				plural(rejected, "rejected job"))
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
				view.Age(now.Sub(j.SubmittedAt)), clean(r.Reason))
		}
		return tw.Flush()
	})
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

// jobsRun is the RunE of a command that shows every job record (queue,
// stats). It names the records that could not be read (see `lockstep
// check`) on stderr, so that -o json stays parseable.
func (a *app) jobsRun(show func([]domain.Job) error) runE {
	return a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
		jobs, bad, err := c.Jobs(ctx)
		if err != nil {
			return err
		}
		for _, k := range bad {
			fmt.Fprintf(a.env.stderr, "lockstep: job record %s is malformed; skipped (lockstep check names what is wrong)\n", clean(k))
		}
		return show(jobs)
	})
}

// writeJSON prints v as indented JSON.
func writeJSON(env *cliEnv, v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

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

func (a *app) describe(cmd *cobra.Command) runE {
	cmd.Long = "Show a job: state, spec, placement per rank and its event timeline."
	return a.clientRun(a.describeJob)
}

func (a *app) describeJob(ctx context.Context, c *client.Client, args []string) error {
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
}

// dependencies writes a spec's dependencies as Slurm's --dependency does
// ("afterok:a:b,singleton").
func dependencies(s jobspec.Spec) string {
	var parts []string
	for _, d := range s.Dependencies {
		parts = append(parts, d.Type+":"+strings.Join(d.Jobs, ":"))
	}
	if s.Singleton {
		parts = append(parts, "singleton")
	}
	return strings.Join(parts, ",")
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
	fmt.Fprintf(w, "Gang:       %s × %s, %s per node\n", plural(d.Spec.Gang.Nodes, "node"), plural(d.Spec.Gang.GPUsPerNode, "GPU"), plural(d.Spec.Gang.TasksPerNode, "rank"))
	if g := d.Spec.Gang; g.GPUType != "" || g.MinGPUMemoryMiB > 0 || g.CPUsPerTask > 0 || g.GPUBind == "closest" {
		fmt.Fprintf(w, "Hardware:   %s\n", gangHardware(g))
	}
	fmt.Fprintf(w, "Command:    %s\n", clean(strings.Join(d.Spec.Command, " ")))
	if deps := dependencies(d.Spec); deps != "" {
		fmt.Fprintf(w, "Depends on: %s\n", clean(deps))
	}
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
