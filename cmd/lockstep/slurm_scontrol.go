package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

const scontrolUsage = "scontrol show hostnames [LIST] | show hostlist LIST | show job [ID] | show node [NAME]"

func (a *app) scontrol(cmd *cobra.Command) runE {
	fs := slurmFlags("scontrol")
	return a.slurmCommand(cmd, fs, longHelp(`
		Slurm's scontrol, for what scripts ask of it:

		  show hostnames [LIST]  one host per line, of LIST or $SLURM_JOB_NODELIST
		  show hostlist LIST     LIST (names, comma-separated) as a hostlist expression
		  show job [ID]          a job (every job without ID) as key=value lines
		  show node [NAME]       a node (every node without NAME) as key=value lines`),
		func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || !strings.EqualFold(args[0], "show") {
				return usagef("scontrol: want %s", scontrolUsage)
			}
			what, rest := strings.ToLower(args[1]), args[2:]
			if len(rest) > 1 {
				return usagef("scontrol show %s takes one argument, got %q", what, rest)
			}
			arg := ""
			if len(rest) == 1 {
				arg = rest[0]
			}
			// Entities match by prefix, as scontrol matches them: `show
			// hostname`, `show host` no (too short: hostnames or hostlist?).
			switch {
			case abbreviates(what, "hostnames", 5):
				return a.showHostnames(arg)
			case abbreviates(what, "hostlist", 5):
				return a.showHostlist(arg)
			case abbreviates(what, "jobs", 1), abbreviates(what, "jobid", 1):
				return a.withClient(cmd.Context(), func(c *client.Client) error { return a.showJobs(cmd.Context(), c, arg) })
			case abbreviates(what, "nodes", 1):
				return a.withClient(cmd.Context(), func(c *client.Client) error { return a.showNodes(cmd.Context(), c, arg) })
			}
			return usagef("scontrol show %s is not supported (want %s)", clean(args[1]), scontrolUsage)
		})
}

// abbreviates reports whether tag names word as scontrol reads its
// entities: a prefix of it in any case, at least that many letters long
// (xstrncasecmp(tag, word, MAX(len(tag), least)) in Slurm).
func abbreviates(tag, word string, least int) bool {
	return len(tag) >= least && strings.HasPrefix(word, strings.ToLower(tag))
}

func (a *app) showHostnames(list string) error {
	if list == "" {
		list = os.Getenv("SLURM_JOB_NODELIST")
	}
	if list == "" {
		return usagef("scontrol show hostnames: give a hostlist, or run it where SLURM_JOB_NODELIST is set")
	}
	names, err := slurm.ExpandHostlist(list)
	if err != nil {
		return usagef("scontrol show hostnames %s: %v", clean(list), err)
	}
	// One write, as C's stdio buffers a pipe: `scontrol show hostnames |
	// head -n 1` under `set -o pipefail` must not die of SIGPIPE when head
	// exits after the first line.
	var b strings.Builder
	for _, n := range names {
		b.WriteString(clean(n) + "\n")
	}
	_, err = io.WriteString(a.env.stdout, b.String())
	return err
}

// showHostlist compresses LIST; its items may be hostlists themselves
// (Slurm's scontrol reads them so).
func (a *app) showHostlist(list string) error {
	if list == "" {
		return usagef("scontrol show hostlist: give the names, comma-separated")
	}
	names, err := slurm.ExpandHostlist(list)
	if err != nil {
		return usagef("scontrol show hostlist %s: %v", clean(list), err)
	}
	s, err := slurm.CompressHostlist(names)
	if err != nil {
		return usagef("scontrol show hostlist %s: %v", clean(list), err)
	}
	fmt.Fprintln(a.env.stdout, clean(s))
	return nil
}

func (a *app) showJobs(ctx context.Context, c *client.Client, id string) error {
	now := time.Now()
	if id != "" {
		// An array's ID shows every task, as Slurm does.
		jobs, _, err := jobsByID(ctx, c, id)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			printJobRecord(a.env.stdout, slurmJobOf(j), now)
		}
		return nil
	}
	jobs, err := a.readJobs(ctx, c)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		fmt.Fprintln(a.env.stdout, "No jobs in the system")
	}
	for _, j := range jobs {
		printJobRecord(a.env.stdout, j, now)
	}
	return nil
}

// kv is one key=value line of scontrol's layout; values are escaped.
type kv [][2]string

func (l kv) write(w io.Writer, indent string) {
	parts := make([]string, len(l))
	for i, p := range l {
		v := p[1]
		if v == "" {
			v = "(null)"
		}
		parts[i] = p[0] + "=" + clean(v)
	}
	fmt.Fprintln(w, indent+strings.Join(parts, " "))
}

// writeRecord writes one record as scontrol show does: its first line,
// the others indented by three spaces, then a blank line.
func writeRecord(w io.Writer, lines []kv) {
	for i, l := range lines {
		indent := "   "
		if i == 0 {
			indent = ""
		}
		l.write(w, indent)
	}
	fmt.Fprintln(w)
}

// printJobRecord prints a job in scontrol show job's layout (first line,
// then indented lines, then a blank line).
func printJobRecord(w io.Writer, j slurmJob, now time.Time) {
	g := j.Spec.Gang
	end := "Unknown"
	if j.State.Terminal() {
		end = slurmTimeOr(j.EndedAt, "Unknown")
	}
	lines := []kv{
		{{"JobId", j.ID}, {"JobName", j.Spec.Name}},
		{{"UserId", j.user()}},
		{{"Priority", strconv.Itoa(j.Spec.Priority)}, {"Partition", j.Spec.Queue}},
		{{"JobState", j.state.Name}, {"Reason", slurm.Reason(j.Reason)}},
		{{"Requeue", "1"}, {"Restarts", strconv.Itoa(j.Restarts)}, {"ExitCode", j.exitCode()}},
		{{"RunTime", slurm.Elapsed(j.elapsed(now))}, {"TimeLimit", j.timeLimitLong()}},
		{{"SubmitTime", slurmTime(j.SubmittedAt)}, {"StartTime", slurmTimeOr(j.RunningAt, "Unknown")}, {"EndTime", end}},
		{{"NodeList", j.nodeList()}},
		{{"NumNodes", strconv.Itoa(g.Nodes)}, {"NumCPUs", strconv.Itoa(j.cpus())}, {"NumTasks", strconv.Itoa(g.Nodes * g.TasksPerNode)},
			{"CPUs/Task", strconv.Itoa(max(g.CPUsPerTask, 1))}},
		{{"TRES", fmt.Sprintf("cpu=%d,node=%d,gres/gpu=%d", j.cpus(), g.Nodes, g.Nodes*g.GPUsPerNode)}},
		{{"Command", strings.Join(j.Spec.Command, " ")}},
		{{"WorkDir", j.Spec.Workdir}},
		{{"TresPerNode", j.tresPerNode()}},
	}
	if j.Detail != "" {
		lines = append(lines, kv{{"Comment", j.Detail}})
	}
	writeRecord(w, lines)
}

func (a *app) showNodes(ctx context.Context, c *client.Client, name string) error {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return err
	}
	parts, err := a.partitions(ctx, c)
	if err != nil {
		return err
	}
	found := false
	for _, n := range nodes {
		if name != "" && n.Node.Name != name {
			continue
		}
		found = true
		printNodeRecord(a.env.stdout, n, parts)
	}
	if !found && name != "" {
		return errors.Newf("node %s not found", name)
	}
	return nil
}

// printNodeRecord prints a node in scontrol show node's layout.
func printNodeRecord(w io.Writer, n domain.NodeInfo, partitions []string) {
	state := strings.ToUpper(slurmNodeStateLong(n))
	lines := []kv{
		{{"NodeName", n.Node.Name}, {"NodeAddr", n.Node.Addr}},
		{{"CPUTot", strconv.Itoa(n.Node.CPUs)}},
		{{"Gres", fmt.Sprintf("gpu:%d", n.Node.GPUs)}, {"GresUsed", fmt.Sprintf("gpu:%d", n.GPUsUsed)}},
		{{"State", state}},
		{{"Partitions", strings.Join(partitions, ",")}},
	}
	if n.Node.GPUModel != "" {
		lines = append(lines, kv{{"AvailableFeatures", strings.ReplaceAll(n.Node.GPUModel, " ", "_")}})
	}
	if n.State.Reason != "" {
		lines = append(lines, kv{{"Reason", n.State.Reason}})
	}
	writeRecord(w, lines)
}
