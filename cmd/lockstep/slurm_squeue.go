package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
)

// squeue's -o fields (squeue(1)) and their headers.
var squeueHeaders = map[byte]string{
	'i': "JOBID", 'j': "NAME", 'u': "USER", 'P': "PARTITION", 't': "ST", 'T': "STATE",
	'M': "TIME", 'l': "TIME_LIMIT", 'D': "NODES", 'R': "NODELIST(REASON)", 'C': "CPUS",
	'b': "TRES_PER_NODE", 'N': "NODELIST", 'r': "REASON", 'Q': "PRIORITY", 'V': "SUBMIT_TIME",
	'S': "START_TIME",
}

const (
	squeueFields  = "ijuPtTMlDRCbNrQVS"
	squeueDefault = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
	squeueLong    = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
)

func (a *app) squeue(cmd *cobra.Command) runE {
	fs := slurmFlags("squeue")
	noHeader := fs.BoolP("noheader", "h", false, "no header line")
	format := fs.StringP("format", "o", "", "output format, Slurm's %-fields (default \""+squeueDefault+"\"; env SQUEUE_FORMAT)")
	long := fs.BoolP("long", "l", false, "long format (\""+squeueLong+"\")")
	users := fs.StringP("user", "u", "", "only these users' jobs (comma-separated)")
	ids := fs.StringP("jobs", "j", "", "only these jobs (comma-separated IDs); shows ended jobs too")
	states := fs.StringP("states", "t", "", "only jobs in these states: codes or names (PD,R,CD,...) or all")
	parts := fs.StringP("partition", "p", "", "only jobs in these partitions (Lockstep queues)")
	names := fs.StringP("name", "n", "", "only jobs of these names (comma-separated)")
	me := fs.Bool("me", false, "only $USER's jobs (-u $USER)")
	_ = fs.BoolP("all", "a", false, "accepted for Slurm (every partition is shown)")
	return a.slurmCommand(cmd, fs, longHelp(`
		List jobs as Slurm's squeue does: partitions are Lockstep queues, states
		and reasons are Slurm's (docs/slurm.md maps them).`), func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("squeue takes no arguments, got %q", args)
		}
		f := *format
		if f == "" && *long {
			f = squeueLong
		}
		f = cmp.Or(f, os.Getenv("SQUEUE_FORMAT"), squeueDefault)
		fmtItems, err := slurm.ParseFormat(f, squeueFields)
		if err != nil {
			return usagef("squeue -o/--format: %v", err)
		}
		filter := jobFilter{ids: splitList(*ids), users: splitList(*users), partitions: splitList(*parts)}
		if *me {
			filter.users = append(filter.users, os.Getenv("USER"))
		}
		wantNames := splitList(*names)
		if *states != "" {
			if filter.states, err = slurm.ParseStates(*states); err != nil {
				return usagef("squeue -t/--states: %v", err)
			}
		}
		return a.withClient(cmd.Context(), func(c *client.Client) error {
			jobs, err := a.readJobs(cmd.Context(), c)
			if err != nil {
				return err
			}
			if !*noHeader {
				fmt.Fprintln(a.env.stdout, fmtItems.Render(func(b byte) string { return squeueHeaders[b] }))
			}
			now := time.Now()
			for _, j := range jobs {
				// Without -t, squeue shows the jobs that have not ended; with
				// -j, any state (as squeue does for jobs it still holds).
				if !filter.match(j) || (*states == "" && len(filter.ids) == 0 && j.State.Terminal()) ||
					(len(wantNames) > 0 && !slices.Contains(wantNames, j.Spec.Name)) {
					continue
				}
				fmt.Fprintln(a.env.stdout, fmtItems.Render(func(b byte) string { return clean(squeueField(j, b, now)) }))
			}
			return nil
		})
	})
}

func squeueField(j slurmJob, field byte, now time.Time) string {
	switch field {
	case 'i':
		return j.ID
	case 'j':
		return j.Spec.Name
	case 'u':
		return j.user()
	case 'P':
		return j.Spec.Queue
	case 't':
		return j.state.Code
	case 'T':
		return j.state.Name
	case 'M':
		return slurm.TimeString(j.elapsed(now))
	case 'l':
		return j.timeLimit()
	case 'D':
		return strconv.Itoa(j.Spec.Gang.Nodes)
	case 'R':
		return j.reasonOrNodes()
	case 'C':
		return strconv.Itoa(j.cpus())
	case 'b':
		return j.tresPerNode()
	case 'N':
		return j.nodeList()
	case 'r':
		return slurm.Reason(j.Reason)
	case 'Q':
		return strconv.Itoa(j.Spec.Priority)
	case 'V':
		return slurmTime(j.SubmittedAt)
	case 'S':
		return slurmTime(j.RunningAt)
	}
	return ""
}

// slurmTime is a time as Slurm prints one (YYYY-MM-DDTHH:MM:SS, local),
// "N/A" for none.
func slurmTime(t time.Time) string {
	if t.IsZero() {
		return "N/A"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}
