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
	cmd.Long = longHelp(`
		List jobs (pending and running; -a for all), oldest first. How many rejected
		jobs are not shown is said on stderr. -w redraws the list whenever a job record
		changes, until interrupted.`)
	fs := cmd.Flags()
	all := fs.BoolP("all", "a", false, "include finished jobs")
	watch := fs.BoolP("watch", "w", false, "redraw whenever a job changes (Ctrl-C stops)")
	f := addSelection(fs)
	cmd.PreRunE = func(*cobra.Command, []string) error { return f.check() } // before dialling
	return a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
		view := func(jobs []domain.Job, bad []string) error {
			a.warnMalformed(bad)
			return a.printQueue(f.apply(jobs, *all))
		}
		if *watch {
			return a.watchQueue(ctx, c, view)
		}
		jobs, bad, err := c.Jobs(ctx)
		if err != nil {
			return err
		}
		return view(jobs, bad)
	})
}

// printQueue prints the jobs queue selected, and on stderr how many
// rejected ones it left out.
func (a *app) printQueue(shown []domain.Job, rejected int) error {
	if rejected > 0 {
		// On stderr, so that -o json stays parseable.
		fmt.Fprintf(a.env.stderr, "lockstep: %s not shown (lockstep queue -a shows them; describe ID says why)\n",
			plural(rejected, "rejected job"))
	}
	sortJobs(shown)
	rows := make([]queueRow, len(shown))
	for i, j := range shown {
		rows[i] = rowOf(j)
	}
	return a.show(rows, func(w io.Writer, wide bool) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		head := "ID\tNAME\tQUEUE\tSTATE\tNODESxGPUS\tAGE\tREASON"
		if wide {
			head += "\tOWNER\tPRIORITY\tATTEMPT\tNODES\tDETAIL"
		}
		fmt.Fprintln(tw, head)
		now := time.Now()
		for i, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", clean(r.ID), clean(r.Name), clean(r.Queue), clean(string(r.State)), r.Shape,
				view.Age(now.Sub(r.SubmittedAt)), clean(r.Reason))
			if wide {
				fmt.Fprintf(tw, "\t%s\t%d\t%d\t%s\t%s", clean(r.Owner), r.Priority, r.Attempt, clean(strings.Join(r.Nodes, ",")), clean(shown[i].Detail))
			}
			fmt.Fprintln(tw)
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
	Detail      string       `json:"detail,omitempty"`
	Owner       string       `json:"owner,omitempty"`
	Attempt     int          `json:"attempt"`
	Nodes       []string     `json:"nodes,omitempty"`
}

func rowOf(j domain.Job) queueRow {
	r := queueRow{
		ID: j.ID, Name: j.Spec.Name, Queue: j.Spec.Queue, State: j.State, Priority: j.Spec.Priority,
		Shape:       fmt.Sprintf("%dx%d", j.Spec.Gang.Nodes, j.Spec.Gang.GPUsPerNode),
		SubmittedAt: j.SubmittedAt, Reason: j.Reason, Detail: j.Detail, Owner: j.Owner, Attempt: j.Attempt,
	}
	if j.Placement != nil {
		r.Nodes = j.Placement.NodeNames()
	}
	return r
}

// sortJobs orders jobs oldest first (then by ID).
func sortJobs(jobs []domain.Job) {
	sort.Slice(jobs, func(a, b int) bool {
		if !jobs[a].SubmittedAt.Equal(jobs[b].SubmittedAt) {
			return jobs[a].SubmittedAt.Before(jobs[b].SubmittedAt)
		}
		return jobs[a].ID < jobs[b].ID
	})
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
		a.warnMalformed(bad)
		return show(jobs)
	})
}

// warnMalformed names on stderr the job records that could not be read.
func (a *app) warnMalformed(bad []string) {
	for _, k := range bad {
		fmt.Fprintf(a.env.stderr, "lockstep: job record %s is malformed; skipped (lockstep check names what is wrong)\n", clean(k))
	}
}

// writeJSON prints v as indented JSON.
func writeJSON(env *cliEnv, v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// description is `describe -o json`. Elapsed is from the last start to the
// end, or to now while the job runs.
type description struct {
	ID          string              `json:"id"`
	State       domain.State        `json:"state"`
	Reason      string              `json:"reason,omitempty"`
	Detail      string              `json:"detail,omitempty"`
	Attempt     int                 `json:"attempt"`
	Restarts    int                 `json:"restarts"`
	MaxRestarts int                 `json:"maxRestarts"`
	ExitCode    *int                `json:"exitCode,omitempty"`
	SubmittedAt time.Time           `json:"submittedAt"`
	RunningAt   time.Time           `json:"runningAt,omitzero"`
	EndedAt     time.Time           `json:"endedAt,omitzero"`
	Elapsed     time.Duration       `json:"elapsed"`
	Spec        jobspec.Spec        `json:"spec"`
	Placement   *domain.Placement   `json:"placement,omitempty"`
	Timing      domain.Timing       `json:"timing"`
	Pull        *domain.PullSummary `json:"pull,omitempty"`
	Efficiency  float64             `json:"efficiency"`
	Events      []events.Event      `json:"events"`
	TraceID     string              `json:"traceId,omitempty"`
	Owner       string              `json:"owner,omitempty"`
}

func (a *app) describe(cmd *cobra.Command) runE {
	cmd.Long = "Show a job: state, spec, placement per rank and its event timeline."
	return a.clientRun(a.describeJob)
}

func (a *app) describeJob(ctx context.Context, c *client.Client, args []string) error {
	// A job submitted a moment ago gets that moment to be admitted, as
	// for cancel and drain.
	jobs, array, err := jobsByID(ctx, c, args[0])
	if err != nil {
		return err
	}
	if array {
		// An array's ID has no record of its own: say which to describe.
		return errors.Newf("%s is an array of %d tasks (%s … %s): describe one of them; `lockstep queue -a` lists them",
			clean(args[0]), len(jobs), clean(jobs[0].ID), clean(jobs[len(jobs)-1].ID))
	}
	j := jobs[0]
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
		Timing: j.Timing, Efficiency: j.Timing.Efficiency(), TraceID: j.TraceID, Owner: j.Owner, Pull: j.Pull,
	}
	if d.Events == nil {
		d.Events = []events.Event{}
	}
	// Stream order is publication order; services publish after their
	// commits, so two services' events can land out of time order.
	sort.SliceStable(d.Events, func(a, b int) bool { return d.Events[a].Time.Before(d.Events[b].Time) })
	d.Elapsed = elapsed(d.RunningAt, d.EndedAt, time.Now())
	return a.show(d, func(w io.Writer, _ bool) error {
		printDescription(w, d)
		return nil
	})
}

// elapsed is how long a job has run: from its last start to its end, or
// to now while it runs; 0 before it ever ran.
func elapsed(running, ended, now time.Time) time.Duration {
	switch {
	case running.IsZero():
		return 0
	case ended.IsZero():
		return now.Sub(running)
	}
	return ended.Sub(running)
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
	if p := d.Pull; p != nil {
		// The container gang's pull phase, apart from scheduling and launch.
		fmt.Fprintf(w, "Pull:       %s (%s slowest, %s)\n", p.Took.Round(time.Millisecond), clean(p.Slowest), imageSize(p.Bytes))
	}
	if !d.EndedAt.IsZero() {
		fmt.Fprintf(w, "Ended:      %s (%s after submit)\n", d.EndedAt.Local().Format(time.RFC3339), d.EndedAt.Sub(d.SubmittedAt).Round(time.Millisecond))
	}
	if d.Elapsed > 0 {
		so := "so far"
		if !d.EndedAt.IsZero() {
			so = "from start to end"
		}
		fmt.Fprintf(w, "Elapsed:    %s (%s)\n", d.Elapsed.Round(time.Millisecond), so)
	}
	if d.TraceID != "" {
		fmt.Fprintf(w, "Trace:      %s (lockstep trace %s)\n", clean(d.TraceID), clean(d.ID))
	}
	if t := d.Timing; t.Compute > 0 || t.SchedLatency > 0 {
		pull := ""
		if t.Pull > 0 {
			pull = fmt.Sprintf(" + image pull %s", t.Pull.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "Efficiency: η %.3f = compute %s / (compute + scheduling %s%s + checkpoint drain %s); gang wait %s\n",
			d.Efficiency, t.Compute.Round(time.Millisecond), t.SchedLatency.Round(time.Millisecond), pull,
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

// imageSize writes bytes in decimal units, as engines list image sizes.
func imageSize(b int64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
