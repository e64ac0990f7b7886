package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// sinfo's -o fields (sinfo(1)) and their headers.
var sinfoHeaders = map[byte]string{
	'P': "PARTITION", 'R': "PARTITION", 'a': "AVAIL", 'l': "TIMELIMIT", 'D': "NODES",
	't': "STATE", 'T': "STATE", 'N': "NODELIST", 'c': "CPUS", 'G': "GRES", 'E': "REASON",
}

const sinfoFields = "PRalDtTNcGE"

// slurmNodeStateLong is sinfo's %T for a node.
func slurmNodeStateLong(n domain.NodeInfo) string {
	code := slurm.NodeState(n.Up, n.State.Drained, n.GPUsUsed, n.Node.GPUs)
	return map[string]string{"idle": "idle", "mix": "mixed", "alloc": "allocated", "drain": "drained", "drng": "draining", "down": "down"}[code]
}

// partitions are Lockstep's queues as Slurm partitions. Queues share
// every node, and the CLI cannot read the queue configuration, so they
// are the default queue and every other queue a job record names.
func (a *app) partitions(ctx context.Context, c *client.Client) ([]string, error) {
	jobs, _, err := c.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	out := []string{jobspec.DefaultQueue}
	for _, j := range jobs {
		if q := j.Spec.WithDefaults().Queue; !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.Sort(out[1:])
	return out, nil
}

// sinfoRow is one line of sinfo: a partition's nodes in one state (or,
// with -N, one node).
type sinfoRow struct {
	partition string
	nodes     []domain.NodeInfo
	state     string
}

func (a *app) sinfo(cmd *cobra.Command) runE {
	fs := slurmFlags("sinfo")
	noHeader := fs.BoolP("noheader", "h", false, "no header line")
	nodeWise := fs.BoolP("Node", "N", false, "one line per node")
	format := fs.StringP("format", "o", "", "output format, Slurm's %-fields ("+fieldsOf(sinfoFields)+")")
	parts := fs.StringP("partition", "p", "", "only these partitions (Lockstep queues)")
	return a.slurmCommand(cmd, fs, longHelp(`
		Show partitions and nodes as Slurm's sinfo does. Partitions are Lockstep's
		queues, which share every node: the default queue (marked *) and every
		other queue a job names. Node states: idle, mix, alloc (by GPUs in use),
		drain, drng (drained, work still on it), down (agent gone).`), func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("sinfo takes no arguments, got %q", args)
		}
		return a.withClient(cmd.Context(), func(c *client.Client) error {
			nodes, err := c.Nodes(cmd.Context())
			if err != nil {
				return err
			}
			partitions, err := a.partitions(cmd.Context(), c)
			if err != nil {
				return err
			}
			if want := splitList(*parts); len(want) > 0 {
				partitions = slices.DeleteFunc(partitions, func(p string) bool { return !slices.Contains(want, p) })
			}
			rows := sinfoRows(partitions, nodes, *nodeWise)
			f := *format
			if f == "" {
				f = sinfoDefaultFormat(rows, *nodeWise)
			}
			items, err := slurm.ParseFormat(f, sinfoFields)
			if err != nil {
				return usagef("sinfo -o/--format: %v", err)
			}
			if !*noHeader {
				fmt.Fprintln(a.env.stdout, items.Render(func(b byte) string { return sinfoHeaders[b] }))
			}
			for _, r := range rows {
				fmt.Fprintln(a.env.stdout, items.Render(func(b byte) string { return clean(sinfoField(r, b)) }))
			}
			return nil
		})
	})
}

func sinfoRows(partitions []string, nodes []domain.NodeInfo, nodeWise bool) []sinfoRow {
	var rows []sinfoRow
	for _, p := range partitions {
		if p == jobspec.DefaultQueue {
			p += "*"
		}
		if nodeWise {
			for _, n := range nodes {
				rows = append(rows, sinfoRow{p, []domain.NodeInfo{n}, slurm.NodeState(n.Up, n.State.Drained, n.GPUsUsed, n.Node.GPUs)})
			}
			continue
		}
		// One row per state, in sinfo's order of first appearance.
		var states []string
		byState := map[string][]domain.NodeInfo{}
		for _, n := range nodes {
			s := slurm.NodeState(n.Up, n.State.Drained, n.GPUsUsed, n.Node.GPUs)
			if byState[s] == nil {
				states = append(states, s)
			}
			byState[s] = append(byState[s], n)
		}
		for _, s := range states {
			rows = append(rows, sinfoRow{p, byState[s], s})
		}
		if len(nodes) == 0 {
			rows = append(rows, sinfoRow{p, nil, "n/a"})
		}
	}
	if nodeWise {
		slices.SortStableFunc(rows, func(x, y sinfoRow) int { return strings.Compare(x.nodes[0].Node.Name, y.nodes[0].Node.Name) })
	}
	return rows
}

// sinfoDefaultFormat fills the default format's widths (%#P, %#N).
func sinfoDefaultFormat(rows []sinfoRow, nodeWise bool) string {
	pw, nw := len("PARTITION"), len("NODELIST")
	for _, r := range rows {
		pw = max(pw, len(r.partition))
		nw = max(nw, len(sinfoField(r, 'N')))
	}
	if nodeWise {
		return fmt.Sprintf("%%-%dN %%.6D %%-%dP %%-6t", nw, pw)
	}
	return fmt.Sprintf("%%-%dP %%.5a %%.10l %%.6D %%.6t %%N", pw)
}

func sinfoField(r sinfoRow, field byte) string {
	switch field {
	case 'P':
		return r.partition
	case 'R':
		return trimStar(r.partition)
	case 'a':
		return "up"
	case 'l':
		return "infinite"
	case 'D':
		return strconv.Itoa(len(r.nodes))
	case 't':
		return r.state
	case 'T':
		if len(r.nodes) == 0 {
			return r.state
		}
		return slurmNodeStateLong(r.nodes[0])
	case 'N':
		names := make([]string, len(r.nodes))
		for i, n := range r.nodes {
			names[i] = n.Node.Name
		}
		return hostlist(names)
	case 'c':
		if len(r.nodes) == 0 {
			return "0"
		}
		return strconv.Itoa(r.nodes[0].Node.CPUs)
	case 'G':
		if len(r.nodes) == 0 {
			return "(null)"
		}
		return fmt.Sprintf("gpu:%d", r.nodes[0].Node.GPUs)
	case 'E':
		if len(r.nodes) == 0 || r.nodes[0].State.Reason == "" {
			return "none"
		}
		return r.nodes[0].State.Reason
	}
	return ""
}

func trimStar(p string) string {
	if n := len(p); n > 0 && p[n-1] == '*' {
		return p[:n-1]
	}
	return p
}

// fieldsOf lists format letters as %-fields.
func fieldsOf(letters string) string {
	s := ""
	for i := range letters {
		if i > 0 {
			s += " "
		}
		s += "%" + letters[i:i+1]
	}
	return s
}
