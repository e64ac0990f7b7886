package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// jobRequest is the RunE of a request about one job (the argument): it
// waits for the job to be known, asks, and says what it asked. A job
// that does not run yet is not asked when runningOnly is set: it is
// named, and if no job was asked the command fails (exit 1).
func (a *app) jobRequest(what string, runningOnly bool, ask func(ctx context.Context, c *client.Client, id string) error) runE {
	return a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
		// An array's ID asks for every task of it not yet ended.
		jobs, array, err := jobsByID(ctx, c, args[0])
		if err != nil {
			return err
		}
		if err := notEnded(args[0], jobs, array); err != nil {
			return err
		}
		asked := 0
		for _, j := range jobs {
			if array && j.State.Terminal() {
				continue
			}
			if runningOnly && (j.State == domain.StatePending || j.State == domain.StateReserved) {
				fmt.Fprintf(a.env.stdout, "%s is %s, not running yet: no %s asked\n", clean(j.ID), clean(string(j.State)), what)
				continue
			}
			if err := ask(ctx, c, j.ID); err != nil {
				return err
			}
			asked++
			fmt.Fprintf(a.env.stdout, "%s requested for %s\n", what, clean(j.ID))
		}
		if asked == 0 {
			return &exitError{code: 1, msg: fmt.Sprintf("nothing of %s runs yet: no %s asked", clean(args[0]), what)}
		}
		return nil
	})
}

// notEnded refuses a request about a job (or an array whose every task)
// that already ended: there is nothing left to cancel or checkpoint, and
// "requested" with exit 0 would say otherwise.
func notEnded(id string, jobs []domain.Job, array bool) error {
	for _, j := range jobs {
		if !j.State.Terminal() {
			return nil
		}
	}
	if array {
		return &exitError{code: 1, msg: fmt.Sprintf("array %s already ended: all %s ended", clean(id), plural(len(jobs), "task"))}
	}
	j := jobs[0]
	return &exitError{code: 1, msg: fmt.Sprintf("job %s already ended (%s)", clean(j.ID), clean(string(j.State)))}
}

// waitJob reads a job, giving one submitted a moment ago a little time to
// be admitted before calling its ID unknown.
func waitJob(ctx context.Context, c *client.Client, id string) (domain.Job, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		j, err := c.Job(ctx, id)
		if err == nil || !errs.IsNotFound(err) || time.Now().After(deadline) {
			return j, err
		}
		if ctx.Err() != nil {
			return j, ctx.Err()
		}
		clock.Sleep(ctx, 100*time.Millisecond)
	}
}

func (a *app) checkpoint(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Ask a running job to checkpoint, then requeue it to resume from that checkpoint
		(its GPUs are freed as soon as every rank acknowledges). A job still pending or
		reserved has nothing to checkpoint: it is named and not asked, and the command
		fails if nothing was asked.`)
	reason := cmd.Flags().String("reason", "checkpoint requested", "why (shown in describe)")
	return a.jobRequest("checkpoint", true, func(ctx context.Context, c *client.Client, id string) error {
		return c.Drain(ctx, id, domain.DrainCheckpoint, domain.ThenRequeue, *reason)
	})
}

// nodeCommands are node's subcommands.
var nodeCommands = []command{
	{"", "drain NODE", "no new work on NODE; its running gangs checkpoint and move elsewhere", args(1, "NODE"), onNATS, (*app).nodeDrain},
	{"", "resume NODE", "return NODE to service", args(1, "NODE"), onNATS, (*app).nodeResume},
	{"", "list [NODE...]", "every node's (or the named nodes') state and GPU use", cobra.ArbitraryArgs, onNATSOut, (*app).nodeList},
	{"", "remove NODE", "forget a node that is gone for good (only when down and idle; admin, through etcd)", args(1, "NODE"), onNATSEtcd, (*app).nodeRemove},
}

func (a *app) node(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		drain: no new work on NODE; its running gangs checkpoint and move elsewhere.
		resume: return NODE to service. list [NODE...]: every node's (or the named nodes')
		state and GPU use.`) + nodeRemoveHelp
	a.add(cmd, nodeCommands)
	return func(*cobra.Command, []string) error {
		return usagef("node needs a subcommand: drain NODE --reason TEXT | resume NODE | list [NODE...] [-o json]" + nodeRemoveUsage)
	}
}

func (a *app) nodeDrain(cmd *cobra.Command) runE {
	reason := cmd.Flags().String("reason", "", "why (shown to users whose jobs move; required)")
	drain := a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
		if err := knownNode(ctx, c, args[0]); err != nil {
			return err
		}
		if err := c.DrainNode(ctx, args[0], *reason); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "node %s draining\n", clean(args[0]))
		return nil
	})
	return func(cmd *cobra.Command, args []string) error {
		if *reason == "" { // before connecting: the command line is wrong
			return usagef("node drain: --reason is required (it is shown to users whose jobs move)")
		}
		return drain(cmd, args)
	}
}

func (a *app) nodeResume(*cobra.Command) runE {
	return a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
		if err := knownNode(ctx, c, args[0]); err != nil {
			return err
		}
		if err := c.ResumeNode(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "node %s resumed\n", clean(args[0]))
		return nil
	})
}

func (a *app) nodeList(*cobra.Command) runE {
	return a.clientRun(func(ctx context.Context, c *client.Client, names []string) error {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		if nodes, err = onlyNodes(nodes, names); err != nil {
			return err
		}
		if a.structured() {
			return a.writeData(nodes)
		}
		wide := a.format() == "wide"
		tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, "NODE\tSTATE\tGPUS USED/TOTAL\tLEAF\tJOBS\tHARDWARE\tREASON\tUNHEALTHY")
		if wide {
			fmt.Fprint(tw, "\tSPINE\tSINCE\tJOB IDS")
		}
		fmt.Fprintln(tw)
		for _, n := range nodes {
			state := "up"
			switch {
			case !n.Up && !n.DownSince.IsZero():
				state = "down " + view.Age(time.Since(n.DownSince))
			case !n.Up:
				state = "down"
			case n.State.Drained && n.GPUsUsed > 0:
				state = "draining"
			case n.State.Drained:
				state = "drained"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%d\t%s\t%s\t%s", clean(n.Node.Name), state, n.GPUsUsed, n.Node.GPUs, clean(n.Node.Leaf), len(n.Jobs), hardware(n.Node), clean(n.State.Reason), unhealthyColumn(n.Node))
			if wide {
				fmt.Fprintf(tw, "\t%s\t%s\t%s", orDash(clean(n.Node.Spine)), orDash(stateSince(n)), orDash(clean(strings.Join(n.Jobs, ","))))
			}
			fmt.Fprintln(tw)
		}
		return tw.Flush()
	})
}

// stateSince is when a node went into the state node list shows: down,
// or drained or resumed (RFC 3339, UTC); "" when not known.
func stateSince(n domain.NodeInfo) string {
	t := n.State.Since
	if !n.Up {
		t = n.DownSince
	}
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// knownNode refuses a node the inventory does not have (a typo would
// otherwise write a nodestate key for a node that does not exist). The
// inventory is the drain service's node list, read from etcd; its view
// may be a moment behind a node that just registered (or a service that
// just started), so a name it lacks is asked about again for a while.
func knownNode(ctx context.Context, c *client.Client, name string) error {
	deadline := time.Now().Add(inventoryCatchUp)
	for {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		if _, err = onlyNodes(nodes, []string{name}); err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// inventoryCatchUp bounds knownNode's wait for a name the node list lacks.
const inventoryCatchUp = 2 * time.Second

// onlyNodes keeps the nodes names names, in the order given; none keeps
// every node. A name the inventory lacks is an error naming it.
func onlyNodes(nodes []domain.NodeInfo, names []string) ([]domain.NodeInfo, error) {
	if len(names) == 0 {
		return nodes, nil
	}
	out := make([]domain.NodeInfo, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(nodes, func(n domain.NodeInfo) bool { return n.Node.Name == name })
		if i < 0 {
			return nil, unknownNode(name, nodes)
		}
		out = append(out, nodes[i])
	}
	return out, nil
}

// unknownNode is the error for a node name no node has.
func unknownNode(name string, nodes []domain.NodeInfo) error {
	return errors.WithHint(errors.Newf("no node named %q", clean(name)),
		fmt.Sprintf("lockstep node list shows the %s", plural(len(nodes), "node")))
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}
