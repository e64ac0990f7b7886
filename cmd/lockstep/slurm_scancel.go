package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// scancelAction is what scancel asks of a job: Lockstep cannot deliver an
// arbitrary signal, so --signal maps onto what it has.
type scancelAction int

const (
	actCancel     scancelAction = iota // no --signal, or KILL, TERM, INT
	actCheckpoint                      // the job's checkpoint signal
)

func (a *app) scancel(cmd *cobra.Command) runE {
	fs := slurmFlags("scancel")
	users := fs.StringP("user", "u", "", "cancel these users' jobs (comma-separated)")
	states := fs.StringP("state", "t", "", "only jobs in these states (PENDING, RUNNING, ... or PD, R, ...)")
	parts := fs.StringP("partition", "p", "", "only jobs in these partitions (Lockstep queues)")
	name := fs.StringP("name", "n", "", "only jobs of this name")
	signal := fs.StringP("signal", "s", "", "instead of cancelling, send SIG: the job's checkpoint signal (default USR1)\n"+
		"checkpoints and requeues it (lockstep checkpoint); KILL, TERM and INT cancel it")
	quiet := fs.BoolP("quiet", "Q", false, "no error for a job that has already ended")
	return a.slurmCommand(cmd, fs, longHelp(`
		Cancel jobs as Slurm's scancel does: by ID, or every job of -u, -t, -p, -n.
		Lockstep does not deliver arbitrary signals: --signal with the job's
		checkpoint signal asks for a checkpoint (the job is requeued and resumes),
		with KILL, TERM or INT it cancels; any other signal is refused.`), func(cmd *cobra.Command, ids []string) error {
		filter := jobFilter{users: splitList(*users), partitions: splitList(*parts), ownedOnly: true}
		var err error
		if *states != "" {
			if filter.states, err = slurm.ParseStates(*states); err != nil {
				return usagef("scancel -t/--state: %v", err)
			}
		}
		var sig slurm.Signal
		if *signal != "" {
			if sig, err = slurm.ParseSignal(*signal); err != nil {
				return usagef("scancel -s/--signal: %v", err)
			}
		}
		if len(ids) == 0 && len(filter.users) == 0 && len(filter.states) == 0 && len(filter.partitions) == 0 && *name == "" {
			return usagef("scancel: no job identification provided (give job IDs, or -u, -t, -p or -n)")
		}
		return a.withClient(cmd.Context(), func(c *client.Client) error {
			return a.scancelJobs(cmd.Context(), c, ids, filter, *name, sig, *quiet)
		})
	})
}

func (a *app) scancelJobs(ctx context.Context, c *client.Client, ids []string, filter jobFilter, name string, sig slurm.Signal, quiet bool) error {
	var targets []slurmJob
	// Tasks named through their array's ID: an ended one is passed over,
	// as scancel passes over an array's finished tasks.
	viaArray := map[string]bool{}
	if len(ids) > 0 {
		for _, id := range ids {
			jobs, array, err := jobsByID(ctx, c, id)
			if err != nil {
				return errors.Wrapf(err, "scancel %s", id)
			}
			for _, j := range jobs {
				viaArray[j.ID] = array
				targets = append(targets, slurmJobOf(j))
			}
		}
	} else {
		all, err := a.readJobs(ctx, c)
		if err != nil {
			return err
		}
		targets = all
	}
	var failed error
	for _, j := range targets {
		if !filter.match(j) || (name != "" && j.Spec.Name != name) {
			continue
		}
		if j.State.Terminal() {
			// By ID, an ended job is an error (as scancel says it); by
			// filter, it is simply not selected.
			if len(ids) > 0 && !quiet && !viaArray[j.ID] {
				failed = errors.CombineErrors(failed, errors.Newf("job %s has already ended (%s)", j.ID, j.state.Name))
			}
			continue
		}
		act, err := scancelActionFor(sig, j)
		if err == nil {
			err = scancelOne(ctx, c, j, act)
		}
		if err != nil {
			failed = errors.CombineErrors(failed, errors.Wrapf(err, "scancel %s", j.ID))
		}
	}
	if failed != nil {
		return failed
	}
	return nil
}

// scancelActionFor maps --signal onto what Lockstep can do for j.
func scancelActionFor(sig slurm.Signal, j slurmJob) (scancelAction, error) {
	if sig.Number == 0 || slices.Contains([]string{"KILL", "TERM", "INT"}, sig.Name) {
		return actCancel, nil
	}
	want, err := slurm.ParseSignal(j.Spec.Checkpoint.Signal)
	if err == nil && want.Number == sig.Number {
		if j.state != slurm.Running {
			return 0, errors.Newf("--signal=%s: the job is %s; only a running job can be signalled (checkpointed)", sigName(sig), j.state.Name)
		}
		return actCheckpoint, nil
	}
	return 0, errors.WithHintf(errors.Newf("--signal=%s cannot be delivered: Lockstep sends a job only its checkpoint signal (%s)",
		sigName(sig), j.Spec.Checkpoint.Signal), "--signal=%s checkpoints and requeues the job; KILL, TERM or INT cancel it", j.Spec.Checkpoint.Signal)
}

func sigName(s slurm.Signal) string {
	if s.Name == "" {
		return fmt.Sprint(s.Number)
	}
	return s.Name
}

func scancelOne(ctx context.Context, c *client.Client, j slurmJob, act scancelAction) error {
	if act == actCheckpoint {
		return c.Drain(ctx, j.ID, domain.DrainCheckpoint, domain.ThenRequeue, "scancel --signal")
	}
	return c.Cancel(ctx, j.ID, "cancelled by scancel")
}
