package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/accounting"
)

// window is the time window and whose jobs history and usage read: their
// shared flags.
type window struct {
	since, until string
	allUsers     bool
	sel          *selection
}

func addWindow(fs *pflag.FlagSet) *window {
	w := &window{sel: addSelection(fs)}
	fs.StringVar(&w.since, "since", "24h", "from this time: a duration back from now (90m, 24h, 7d) or an RFC 3339 time")
	fs.StringVar(&w.until, "until", "", "until this time (same forms; default now)")
	fs.BoolVar(&w.allUsers, "all-users", false, "every user's jobs (default with credentials: your own; operators and admins may read all)")
	return w
}

// bounds checks the selection and reads the window's --since and
// --until at now.
func (w *window) bounds(now time.Time) (since, until time.Time, err error) {
	if err := w.sel.check(); err != nil {
		return since, until, err
	}
	if since, err = parseWhen("--since", w.since, now); err != nil {
		return since, until, err
	}
	until = now
	if w.until != "" {
		if until, err = parseWhen("--until", w.until, now); err != nil {
			return since, until, err
		}
	}
	if until.Before(since) {
		return since, until, usagef("--until %s is before --since %s", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	return since, until, nil
}

// preRun refuses a bad window before anything is dialled: a usage error
// (exit 2) whether or not a server answers.
func (w *window) preRun(*cobra.Command, []string) error {
	_, _, err := w.bounds(time.Now())
	return err
}

// read checks the flags and folds the accounting history of the window
// into one row per job, the selection's. How many messages were malformed
// is said on stderr.
func (w *window) read(ctx context.Context, a *app, c *client.Client) ([]accounting.Row, error) {
	now := time.Now()
	since, until, err := w.bounds(now)
	if err != nil {
		return nil, err
	}
	owner := w.owner(c)
	read, err := c.History(ctx, owner, since, until)
	if err != nil {
		return nil, err
	}
	if read.Malformed > 0 {
		fmt.Fprintf(a.env.stderr, "lockstep: skipped %s of the accounting history that did not decode as an event of its subject\n",
			plural(read.Malformed, "malformed message"))
	}
	end, evs := until, read.Events
	if !until.Before(now) {
		end = now
		evs = append(evs, a.unfinished(ctx, c, owner, since)...)
	}
	var rows []accounting.Row
	for _, r := range accounting.Fold(evs, end) {
		if w.sel.match(r.Owner, r.Queue, r.State) {
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// unfinished is, for each job that has not ended and was submitted
// before since, the event its record stands for now: a gang that started
// days ago and runs through the window has no event in it, yet is in the
// window's use. The records are the jobs KV's (authoritative; one who may
// not scan them is told, and the rows come from the history alone).
func (a *app) unfinished(ctx context.Context, c *client.Client, owner string, since time.Time) []events.Event {
	jobs, bad, err := c.Jobs(ctx)
	if err != nil {
		fmt.Fprintf(a.env.stderr, "lockstep: jobs that started before --since and still run are left out: %s\n", clean(err.Error()))
		return nil
	}
	a.warnMalformed(bad)
	var out []events.Event
	for _, j := range jobs {
		if j.State.Terminal() || !j.SubmittedAt.Before(since) || (owner != subjects.AnyOwner && j.Owner != owner) {
			continue
		}
		ev := events.ForJob(events.Admitted, j, j.SubmittedAt)
		switch j.State {
		case domain.StateRunning:
			ev = events.ForJob(events.Running, j, j.RunningAt)
			ev.Placement = j.Placement
		case domain.StateReserved:
			ev = events.ForJob(events.Reserved, j, j.ReservedAt)
			ev.Placement = j.Placement
		}
		out = append(out, ev)
	}
	return out
}

// owner is whose history to read: the one user -u names, else with
// credentials (and without --all-users) the connection's user, as sacct
// shows your own jobs; else everyone's (the selection filters them).
func (w *window) owner(c *client.Client) string {
	switch {
	case len(w.sel.users) == 1 && w.sel.users[0] != subjects.NoOwner:
		return w.sel.users[0]
	case c.User != "" && !w.allUsers && len(w.sel.users) == 0:
		return c.User
	}
	return subjects.AnyOwner
}

// parseWhen reads a time flag: a duration back from now (with d for
// days), or an RFC 3339 time.
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := parseAgo(s)
	if err != nil || d < 0 {
		return time.Time{}, usagef("%s: %q is neither a duration (90m, 24h, 7d) nor an RFC 3339 time (2026-12-01T00:00:00Z)", flag, s)
	}
	return now.Add(-d), nil
}

// parseAgo is time.ParseDuration that also takes whole days ("7d").
func parseAgo(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100000 {
			return 0, errors.Newf("bad days %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

func (a *app) history(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Job accounting, like sacct: one line per job with an event in the window
		(--since, --until): owner, queue, submit/start/end, elapsed, nodes, GPUs,
		GPU-hours (GPUs × time every rank computed), state, exit code, restarts, η.
		Read from the accounting history (LOCKSTEP_HISTORY), kept far longer than the
		job records (the services' --history-retention, 90 days by default, unless
		their --history-max-bytes is reached first).`)
	csvOutput(cmd)
	w := addWindow(cmd.Flags())
	cmd.PreRunE = w.preRun
	return a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
		rows, err := w.read(ctx, a, c)
		if err != nil {
			return err
		}
		if rows == nil {
			rows = []accounting.Row{}
		}
		if a.format() == "csv" {
			return historyCSV(a.env.stdout, rows)
		}
		return a.show(rows, func(out io.Writer, wide bool) error { return historyTable(out, rows, wide) })
	})
}

func historyTable(w io.Writer, rows []accounting.Row, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tOWNER\tQUEUE\tSUBMIT\tSTART\tEND\tELAPSED\tNODES\tGPUS\tGPU-HOURS\tSTATE\tEXIT\tRESTARTS\tη"
	if wide {
		head += "\tATTEMPT\tGANG-WAIT\tREASON"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.2f\t%s\t%s\t%d\t%.3f", clean(r.JobID), clean(ownerColumn(r.Owner)), clean(r.Queue),
			when(r.SubmittedAt), when(r.StartedAt), when(r.EndedAt), view.Age(r.Elapsed), r.Nodes, r.GPUs, r.GPUHours,
			clean(string(r.State)), exitColumn(r.ExitCode), r.Restarts, r.Efficiency)
		if wide {
			fmt.Fprintf(tw, "\t%d\t%s\t%s", r.Attempt, r.Timing.GangWait.Round(time.Millisecond), clean(r.Reason))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// historyCSV writes rows for a spreadsheet: times in RFC 3339, durations
// in seconds. encoding/csv quotes what needs it; a cell a spreadsheet
// would run as a formula is prefixed with a quote.
func historyCSV(w io.Writer, rows []accounting.Row) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "owner", "queue", "submitted", "started", "ended", "elapsed_s", "nodes", "gpus",
		"gpu_hours", "state", "exit_code", "restarts", "efficiency", "attempt", "gang_wait_s", "reason"})
	for _, r := range rows {
		_ = cw.Write([]string{cell(r.JobID), cell(r.Owner), cell(r.Queue), rfc3339(r.SubmittedAt), rfc3339(r.StartedAt),
			rfc3339(r.EndedAt), seconds(r.Elapsed), strconv.Itoa(r.Nodes), strconv.Itoa(r.GPUs),
			strconv.FormatFloat(r.GPUHours, 'f', 4, 64), cell(string(r.State)), exitColumn(r.ExitCode),
			strconv.Itoa(r.Restarts), strconv.FormatFloat(r.Efficiency, 'f', 4, 64), strconv.Itoa(r.Attempt),
			seconds(r.Timing.GangWait), cell(r.Reason)})
	}
	cw.Flush()
	return cw.Error()
}

// cell makes text from the bus safe in a CSV cell: no formula a
// spreadsheet would evaluate.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// when is a time in a table: local, to the second; "-" for none.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}

func exitColumn(code *int) string {
	if code == nil {
		return ""
	}
	return strconv.Itoa(*code)
}

// ownerColumn shows a job without an owner as subjects.NoOwner, the name
// -u takes for it.
func ownerColumn(owner string) string {
	if owner == "" {
		return subjects.NoOwner
	}
	return owner
}

func (a *app) usage(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Use per user and queue over a window (--since, --until), like sreport: jobs,
		GPU-hours, mean gang wait and η, from the accounting history (see history).`)
	w := addWindow(cmd.Flags())
	cmd.PreRunE = w.preRun
	return a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
		rows, err := w.read(ctx, a, c)
		if err != nil {
			return err
		}
		use := accounting.Usage(rows)
		return a.show(use, func(out io.Writer, _ bool) error {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "OWNER\tQUEUE\tJOBS\tGPU-HOURS\tMEAN GANG WAIT\tη")
			for _, u := range use {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%s\t%.3f\n", clean(ownerColumn(u.Owner)), clean(u.Queue), u.Jobs, u.GPUHours,
					u.MeanGangWait.Round(time.Millisecond), u.Efficiency)
			}
			return tw.Flush()
		})
	})
}
