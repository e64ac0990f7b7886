package main

import (
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
)

// sacctFields are sacct's --format fields this has, with sacct's default
// widths, keyed by lower-case name.
var sacctFields = map[string]slurm.Field{}

func init() {
	for _, f := range []slurm.Field{
		{Name: "JobID", Width: 12}, {Name: "JobName", Width: 10}, {Name: "Partition", Width: 10},
		{Name: "Account", Width: 10}, {Name: "AllocCPUS", Width: 10}, {Name: "State", Width: 10},
		{Name: "ExitCode", Width: 8}, {Name: "Elapsed", Width: 10}, {Name: "NNodes", Width: 8},
		{Name: "AllocTRES", Width: 10}, {Name: "User", Width: 9}, {Name: "NodeList", Width: 15},
		{Name: "Start", Width: 19}, {Name: "End", Width: 19}, {Name: "Submit", Width: 19},
		{Name: "Timelimit", Width: 10}, {Name: "Reason", Width: 20}, {Name: "Priority", Width: 10},
		{Name: "JobIDRaw", Width: 12}, {Name: "NCPUS", Width: 10},
	} {
		sacctFields[strings.ToLower(f.Name)] = f
	}
}

// sacctDefault is sacct's default --format.
const sacctDefault = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"

func (a *app) sacct(cmd *cobra.Command) runE {
	fs := slurmFlags("sacct")
	ids := fs.StringP("jobs", "j", "", "only these jobs (comma-separated IDs); any start time")
	users := fs.StringP("user", "u", "", "only these users' jobs (comma-separated)")
	start := fs.StringP("starttime", "S", "", "jobs not ended before this time (default: midnight today, or any with -j)")
	end := fs.StringP("endtime", "E", "", "jobs submitted before this time (default: now)")
	states := fs.StringP("state", "s", "", "only jobs in these states (CD, CA, F, R, ... or names)")
	parts := fs.StringP("partition", "r", "", "only jobs in these partitions (Lockstep queues)")
	format := fs.StringP("format", "o", "", "fields, comma-separated, each with an optional %WIDTH (default "+sacctDefault+"; env SACCT_FORMAT)")
	noHeader := fs.BoolP("noheader", "n", false, "no header lines")
	parsable := fs.BoolP("parsable", "p", false, "fields separated by '|', with a trailing '|'")
	parsable2 := fs.BoolP("parsable2", "P", false, "fields separated by '|', no trailing '|'")
	_ = fs.BoolP("allocations", "X", false, "accepted for Slurm (Lockstep jobs have no steps)")
	_ = fs.BoolP("allusers", "a", false, "accepted for Slurm (every user's jobs are shown)")
	return a.slurmCommand(cmd, fs, longHelp(`
		Show job accounting as Slurm's sacct does, from Lockstep's job records
		(ended jobs are kept for the cluster's retention).`), func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("sacct takes no arguments, got %q (job IDs go to -j)", args)
		}
		f := cmp.Or(*format, os.Getenv("SACCT_FORMAT"), sacctDefault)
		fields, err := slurm.ParseFields(f, sacctFields)
		if err != nil {
			return usagef("sacct -o/--format: %v", err)
		}
		filter := jobFilter{ids: splitList(*ids), users: splitList(*users), partitions: splitList(*parts)}
		if *states != "" {
			if filter.states, err = slurm.ParseStates(*states); err != nil {
				return usagef("sacct -s/--state: %v", err)
			}
		}
		now := time.Now()
		var from, to time.Time
		switch {
		case *start != "":
			if from, err = slurm.ParseDateTime(*start, now); err != nil {
				return usagef("sacct -S/--starttime: %v", err)
			}
		case len(filter.ids) == 0:
			from, _ = slurm.ParseDateTime("midnight", now)
		}
		if *end != "" {
			if to, err = slurm.ParseDateTime(*end, now); err != nil {
				return usagef("sacct -E/--endtime: %v", err)
			}
		}
		return a.withClient(cmd.Context(), func(c *client.Client) error {
			jobs, err := a.readJobs(cmd.Context(), c)
			if err != nil {
				return err
			}
			var rows [][]string
			for _, j := range jobs {
				ended := j.State.Terminal() && !j.EndedAt.IsZero()
				if !filter.match(j) || (ended && j.EndedAt.Before(from)) || (!to.IsZero() && j.SubmittedAt.After(to)) {
					continue
				}
				row := make([]string, len(fields))
				for i, f := range fields {
					row[i] = clean(sacctField(j, f.Name, now))
				}
				rows = append(rows, row)
			}
			if *parsable || *parsable2 {
				fmt.Fprint(a.env.stdout, slurm.Parsable(fields, !*noHeader, !*parsable2, rows))
				return nil
			}
			fmt.Fprint(a.env.stdout, slurm.Table(fields, !*noHeader, rows))
			return nil
		})
	})
}

func sacctField(j slurmJob, name string, now time.Time) string {
	switch name {
	case "JobID", "JobIDRaw":
		return j.ID
	case "JobName":
		return j.Spec.Name
	case "Partition":
		return j.Spec.Queue
	case "Account":
		return ""
	case "AllocCPUS", "NCPUS":
		if j.Placement == nil {
			return "0"
		}
		return strconv.Itoa(j.cpus())
	case "State":
		return j.state.Name
	case "ExitCode":
		return j.exitCode()
	case "Elapsed":
		return slurm.Elapsed(j.elapsed(now))
	case "NNodes":
		return strconv.Itoa(j.Spec.Gang.Nodes)
	case "AllocTRES":
		return j.allocTRES()
	case "User":
		return j.user()
	case "NodeList":
		if l := j.nodeList(); l != "" {
			return l
		}
		return "None assigned"
	case "Start":
		return slurmTimeOr(j.RunningAt, "Unknown")
	case "End":
		if !j.State.Terminal() {
			return "Unknown"
		}
		return slurmTimeOr(j.EndedAt, "Unknown")
	case "Submit":
		return slurmTime(j.SubmittedAt)
	case "Timelimit":
		return j.timeLimitLong()
	case "Reason":
		return slurm.Reason(j.Reason)
	case "Priority":
		return strconv.Itoa(j.Spec.Priority)
	}
	return ""
}

func slurmTimeOr(t time.Time, none string) string {
	if t.IsZero() {
		return none
	}
	return slurmTime(t)
}
