package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// slurmJob is a Lockstep job as the Slurm commands show it. Its strings
// come from outside (names, reasons, node names) and are escaped (clean)
// when printed, never here.
type slurmJob struct {
	domain.Job
	state slurm.JobState
}

func slurmJobOf(j domain.Job) slurmJob {
	j.Spec = j.Spec.WithDefaults()
	return slurmJob{Job: j, state: slurm.StateOf(j.State, j.Drain)}
}

// readJobs reads every job record, oldest submission first, naming on
// stderr those that could not be read (as queue does).
func (a *app) readJobs(ctx context.Context, c *client.Client) ([]slurmJob, error) {
	jobs, bad, err := c.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range bad {
		fmt.Fprintf(a.env.stderr, "lockstep: job record %s is malformed; skipped (lockstep check names what is wrong)\n", clean(k))
	}
	sort.Slice(jobs, func(x, y int) bool {
		if !jobs[x].SubmittedAt.Equal(jobs[y].SubmittedAt) {
			return jobs[x].SubmittedAt.Before(jobs[y].SubmittedAt)
		}
		return jobs[x].ID < jobs[y].ID
	})
	out := make([]slurmJob, len(jobs))
	for i, j := range jobs {
		out[i] = slurmJobOf(j)
	}
	return out, nil
}

// jobFilter is the selection squeue, scancel and sacct share: -j, -u, -t,
// -p; an empty list selects all. An array's ID in -j selects its tasks.
type jobFilter struct {
	ids, users, states, partitions []string
	// ownedOnly: -u selects no job without an owner. scancel sets it: on a
	// cluster without auth `scancel -u bob` must not cancel every job,
	// where `squeue -u bob` may show them all.
	ownedOnly bool
}

func (f jobFilter) match(j slurmJob) bool {
	return (len(f.ids) == 0 || slices.Contains(f.ids, j.ID) || (j.Array != nil && slices.Contains(f.ids, j.Array.JobID))) &&
		(len(f.users) == 0 || (j.Owner == "" && !f.ownedOnly) || slices.Contains(f.users, j.Owner)) &&
		(len(f.states) == 0 || slices.Contains(f.states, j.state.Name)) &&
		(len(f.partitions) == 0 || slices.Contains(f.partitions, j.Spec.Queue))
}

// user is the job's owner; "-" on a cluster without auth, where jobs
// have none (and every -u of squeue and sacct matches them, so that
// `squeue -u $USER` in a script shows its jobs there).
func (j slurmJob) user() string {
	if j.Owner == "" {
		return "-"
	}
	return j.Owner
}

// nodeList is the job's nodes as a Slurm hostlist ("" before placement).
func (j slurmJob) nodeList() string {
	if j.Placement == nil {
		return ""
	}
	return hostlist(j.Placement.NodeNames())
}

// hostlist compresses names, or joins them where they do not compress
// (a name with a bracket or comma).
func hostlist(names []string) string {
	s, err := slurm.CompressHostlist(names)
	if err != nil {
		return strings.Join(names, ",")
	}
	return s
}

// elapsed is how long the job has run: until its end, or now.
func (j slurmJob) elapsed(now time.Time) time.Duration {
	if j.RunningAt.IsZero() {
		return 0
	}
	end := now
	if j.State.Terminal() && !j.EndedAt.IsZero() {
		end = j.EndedAt
	}
	return end.Sub(j.RunningAt)
}

// timeLimit is squeue's TIME_LIMIT (`1:30:00`, as squeue's _print_secs).
func (j slurmJob) timeLimit() string {
	if d := j.Spec.TimeLimit.Duration(); d > 0 {
		return slurm.TimeString(d)
	}
	return "UNLIMITED"
}

// timeLimitLong is scontrol's and sacct's TimeLimit (`01:30:00`, as
// Slurm's secs2time_str).
func (j slurmJob) timeLimitLong() string {
	if d := j.Spec.TimeLimit.Duration(); d > 0 {
		return slurm.Elapsed(d)
	}
	return "UNLIMITED"
}

func (j slurmJob) cpus() int {
	g := j.Spec.Gang
	return g.Nodes * g.TasksPerNode * max(g.CPUsPerTask, 1)
}

// tresPerNode is squeue's %b.
func (j slurmJob) tresPerNode() string {
	return fmt.Sprintf("gres/gpu:%d", j.Spec.Gang.GPUsPerNode)
}

// allocTRES is sacct's AllocTRES.
func (j slurmJob) allocTRES() string {
	if j.Placement == nil {
		return ""
	}
	return fmt.Sprintf("cpu=%d,gres/gpu=%d,node=%d", j.cpus(), j.Placement.GPUCount(), len(j.Placement.Nodes))
}

// exitCode is Slurm's ExitCode, "code:signal" (Lockstep records no signal).
func (j slurmJob) exitCode() string {
	if j.ExitCode == nil {
		return "0:0"
	}
	return fmt.Sprintf("%d:0", *j.ExitCode)
}

// reasonOrNodes is squeue's %R: the reason in parentheses for a job that
// is pending or ended without completing (as squeue shows it), else its
// nodes.
func (j slurmJob) reasonOrNodes() string {
	switch j.state {
	case slurm.Pending, slurm.Failed, slurm.Timeout:
		return "(" + slurm.Reason(j.Reason) + ")"
	}
	return j.nodeList()
}
