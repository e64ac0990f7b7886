package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func (a *app) cancel(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Cancel jobs: stop every rank, release their GPUs. Name jobs by ID (an array's
		ID names its unfinished tasks), or select every unfinished job of -u, --state
		and --queue (with IDs, the selection narrows them). More than one job is
		cancelled only after a confirmation, or with --yes. One line per job says
		what happened; the exit code is 1 if any job could not be cancelled.`)
	fs := cmd.Flags()
	reason := fs.String("reason", "", "why (shown in describe)")
	checkpoint := fs.Bool("checkpoint", false, "let a running job checkpoint first (its grace period), then cancel")
	yes := fs.BoolP("yes", "y", false, "cancel more than one job without asking")
	sel := addSelection(fs)
	// Usage errors before dialling: exit 2 whether or not a server answers.
	cmd.PreRunE = func(_ *cobra.Command, ids []string) error {
		if err := sel.check(); err != nil {
			return err
		}
		if len(ids) == 0 && !sel.selects() {
			return usagef("cancel: name the jobs (IDs), or select them with -u, --state or --queue")
		}
		return nil
	}
	return a.clientRun(func(ctx context.Context, c *client.Client, ids []string) error {
		targets, failed, err := a.cancelTargets(ctx, c, ids, sel)
		if err != nil {
			return err
		}
		if len(targets) == 0 && len(failed) == 0 {
			fmt.Fprintln(a.env.stderr, "lockstep: no unfinished job is selected; nothing cancelled")
			return nil
		}
		// One ID is one job named, even an array's: its tasks are what the
		// user asked for. A selection, or several IDs, are confirmed.
		if len(targets) > 1 && len(ids) != 1 && !*yes {
			if err := a.confirm(targets); err != nil {
				return err
			}
		}
		for _, j := range targets {
			if err := cancelOne(ctx, c, j.ID, *reason, *checkpoint); err != nil {
				failed = append(failed, errors.Wrapf(err, "%s: cancel failed", clean(j.ID)))
				continue
			}
			fmt.Fprintf(a.env.stdout, "cancel requested for %s\n", clean(j.ID))
		}
		return cancelVerdict(a.env, failed, len(failed)+len(targets))
	})
}

// cancelVerdict is a cancel's exit: nil when every job was cancelled; the
// one error when the one job named was not; else each failure on its own
// line on stderr, and how many failed.
func cancelVerdict(env *cliEnv, failed []error, total int) error {
	switch {
	case len(failed) == 0:
		return nil
	case total == 1:
		return failed[0]
	}
	for _, err := range failed {
		fmt.Fprintf(env.stderr, "lockstep: %s\n", clean(err.Error()))
	}
	return &exitError{code: 1, msg: fmt.Sprintf("%s of %d could not be cancelled", plural(len(failed), "job"), total)}
}

// cancelTargets resolves the jobs a cancel names: each ID (an array's ID
// its unfinished tasks), or every job the selection matches, skipping the
// ended ones. A job named by ID that already ended, or that the selection
// leaves out, is a failure.
func (a *app) cancelTargets(ctx context.Context, c *client.Client, ids []string, sel *selection) (targets []domain.Job, failed []error, err error) {
	if len(ids) == 0 {
		all, bad, err := c.Jobs(ctx)
		if err != nil {
			return nil, nil, err
		}
		a.warnMalformed(bad)
		for _, j := range all {
			if !j.State.Terminal() && sel.match(j.Owner, j.Spec.Queue, j.State) {
				targets = append(targets, j)
			}
		}
		sortJobs(targets)
		return targets, nil, nil
	}
	for _, id := range ids {
		jobs, array, err := jobsByID(ctx, c, id)
		if err == nil {
			err = notEnded(id, jobs, array)
		}
		if err != nil {
			failed = append(failed, err)
			continue
		}
		for _, j := range jobs {
			switch {
			case array && j.State.Terminal():
			case !sel.match(j.Owner, j.Spec.Queue, j.State):
				failed = append(failed, errors.Newf("%s: not cancelled: -u, --state or --queue leaves it out (%s)", j.ID, j.State))
			default:
				targets = append(targets, j)
			}
		}
	}
	return targets, failed, nil
}

// cancelOne asks for one job's cancel, after a checkpoint with checkpoint.
func cancelOne(ctx context.Context, c *client.Client, id, reason string, checkpoint bool) error {
	if !checkpoint {
		return c.Cancel(ctx, id, reason)
	}
	if reason == "" {
		reason = "cancelled by user after a checkpoint"
	}
	return c.Drain(ctx, id, domain.DrainCancel, domain.ThenCancel, reason)
}

// confirm lists the jobs about to be cancelled and asks, on the terminal,
// whether to go on. Without a terminal to ask on there is no one to
// confirm, so it refuses: a script says --yes.
func (a *app) confirm(jobs []domain.Job) error {
	if !a.env.stdinTerminal && !isTerminal(a.env.stdin) {
		return &exitError{code: 1, msg: fmt.Sprintf("cancel selects %s and stdin is not a terminal to confirm on; "+
			"nothing cancelled (pass --yes to cancel them)", plural(len(jobs), "job"))}
	}
	tw := tabwriter.NewWriter(a.env.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOWNER\tQUEUE\tSTATE")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", clean(j.ID), clean(j.Owner), clean(j.Spec.Queue), clean(string(j.State)))
	}
	_ = tw.Flush()
	fmt.Fprintf(a.env.stderr, "Cancel these %s? [y/N] ", plural(len(jobs), "job"))
	line, _ := bufio.NewReader(a.env.stdin).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		return &exitError{code: 1, msg: "not confirmed; nothing cancelled"}
	}
	return nil
}

// jobIDArgs checks that every argument is a job ID (jobIDArg's rule),
// before anything is dialled.
func jobIDArgs(cmd *cobra.Command, args []string) error {
	for _, id := range args {
		if !jobspec.ValidID(id) {
			return usagef("%s: job ID %q is not valid: want lowercase letters, digits and '-' "+
				"(at most 63, starting and ending with a letter or digit), or an array task's ID_INDEX", verb(cmd), id)
		}
	}
	return nil
}
