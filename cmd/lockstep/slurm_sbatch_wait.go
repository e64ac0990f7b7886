package main

import (
	"context"
	"fmt"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// sbatch -W waits for the job's record to be final (never an event:
// anyone allowed on the bus can publish one) and exits as sbatch -W does
// (sbatch(1), --wait): with the job's exit code, 1 for a job ended by a
// signal rather than a normal exit, and for a job array the highest
// value of any task.

// sbatchWait waits for one job.
func sbatchWait(ctx context.Context, c *client.Client, id string) error {
	// A record that is someone else's is not this submission's outcome.
	if j, err := waitJob(ctx, c, id); err == nil && c.User != "" && j.Owner != c.User {
		return &exitError{code: 1, msg: fmt.Sprintf("sbatch: job %s: id already used by another user", clean(id))}
	}
	j, err := c.WaitEnded(ctx, id)
	if err != nil {
		return errors.Wrapf(err, "sbatch: waiting for job %s", id)
	}
	code := sbatchExitCode(j)
	if code == 0 {
		return nil
	}
	return &exitError{code: code, msg: fmt.Sprintf("sbatch: job %s %s: %s", id, j.State, j.Reason)}
}

// sbatchWaitArray waits for every task of array id and exits with the
// highest task's sbatch status.
func sbatchWaitArray(ctx context.Context, c *client.Client, id string, array jobspec.Array) error {
	tasks, err := awaitArray(ctx, c, id, array, "sbatch", func(domain.Job) {})
	if err != nil {
		return err
	}
	worst, worstCode, failed := domain.Job{}, 0, 0
	for _, j := range tasks {
		if code := sbatchExitCode(j); code != 0 {
			failed++
			if code > worstCode {
				worst, worstCode = j, code
			}
		}
	}
	if worstCode == 0 {
		return nil
	}
	return &exitError{code: worstCode, msg: fmt.Sprintf("sbatch: array %s: %d of %d tasks did not succeed; %s %s: %s",
		clean(id), failed, len(tasks), clean(worst.ID), worst.State, clean(worst.Reason))}
}

// awaitArray waits for every task of array id to end, calling ended with
// each final record, in index order, and returns them all. Admission
// either expands the array into its tasks' records or rejects it with a
// record under the array's own ID, so both are watched: a rejection ends
// the wait (an error naming it, prefixed by prog), where the tasks'
// records would never come.
func awaitArray(ctx context.Context, c *client.Client, id string, array jobspec.Array, prog string, ended func(domain.Job)) ([]domain.Job, error) {
	indexes, err := array.Tasks()
	if err != nil {
		return nil, errors.Wrap(err, prog)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rejected := make(chan domain.Job, 1)
	go func() {
		if j, err := c.WaitEnded(ctx, id); err == nil {
			rejected <- j
			cancel(errArrayRefused)
		}
	}()
	tasks := make([]domain.Job, 0, len(indexes))
	for _, index := range indexes {
		task := jobspec.TaskID(id, index)
		j, err := c.WaitEnded(ctx, task)
		if err != nil {
			if errors.Is(context.Cause(ctx), errArrayRefused) {
				j := <-rejected
				return nil, &exitError{code: 1, msg: fmt.Sprintf("%s: job %s %s: %s", prog, clean(id), j.State, clean(j.Reason))}
			}
			return nil, errors.Wrapf(err, "%s: waiting for job %s", prog, task)
		}
		if c.User != "" && j.Owner != c.User {
			return nil, &exitError{code: 1, msg: fmt.Sprintf("%s: job %s: id already used by another user", prog, clean(task))}
		}
		ended(j)
		tasks = append(tasks, j)
	}
	return tasks, nil
}

// errArrayRefused cancels the wait for an array's tasks when admission
// rejected the array instead.
var errArrayRefused = errors.New("array rejected")

// sbatchExitCode is sbatch -W's exit status for an ended job: the job's
// exit code; 1 when it ended without one of its own (cancelled, timed
// out, rejected, killed by a signal: Slurm's "terminated due to a signal
// rather than a normal exit").
func sbatchExitCode(j domain.Job) int {
	switch {
	case j.State == domain.StateSucceeded:
		return 0
	case j.State == domain.StateFailed && j.ExitCode != nil && *j.ExitCode > 0 && *j.ExitCode <= 255:
		return *j.ExitCode
	}
	return 1
}
