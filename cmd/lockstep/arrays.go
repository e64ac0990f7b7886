package main

import (
	"context"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// jobsByID reads what id names: its job, or, for an array's ID (which
// has no record of its own), every task of the array, by index. array
// says it was an array's. An unknown ID gets a moment to be admitted
// (waitJob) before it is called unknown.
func jobsByID(ctx context.Context, c *client.Client, id string) (jobs []domain.Job, array bool, err error) {
	j, err := c.Job(ctx, id)
	if err == nil {
		return []domain.Job{j}, false, nil
	}
	if !errs.IsNotFound(err) {
		return nil, false, err
	}
	tasks, err := c.ArrayTasks(ctx, id)
	if err != nil || len(tasks) > 0 {
		return tasks, len(tasks) > 0, err
	}
	if j, err = waitJob(ctx, c, id); err != nil {
		return nil, false, err
	}
	return []domain.Job{j}, false, nil
}
