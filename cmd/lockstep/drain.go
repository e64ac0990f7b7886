package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func (a *app) checkpointCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "checkpoint ID",
		Short: "checkpoint a running job and requeue it",
		Long: "Ask a running job to checkpoint, then requeue it to resume from that checkpoint\n" +
			"(its GPUs are freed as soon as every rank acknowledges).",
		Args: args(1, "job ID"),
		RunE: a.jobRequest("checkpoint", func(ctx context.Context, c *client.Client, id string) error {
			return c.Drain(ctx, id, domain.DrainCheckpoint, domain.ThenRequeue, reason)
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "checkpoint requested", "why (shown in describe)")
	return takes(cmd, groupNATS)
}

// ckptDoneCmd is what a training script runs after writing a checkpoint.
// It holds no bus credentials: the ack goes to the node's agent over its
// socket, with the attempt's token, and the agent forwards it.
func (a *app) ckptDoneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ckpt-done",
		Short: "acknowledge a checkpoint (run by a training rank)",
		Long: "Acknowledge a checkpoint from inside a rank (after the checkpoint signal).\n" +
			"The ack goes to the node's agent, which forwards it. Job, attempt, rank,\n" +
			"the agent's socket and the attempt's token come from the rank's environment\n" +
			"(LOCKSTEP_JOB_ID, LOCKSTEP_ATTEMPT, RANK, " + agent.EnvAgentSocket + ", " + agent.EnvAckToken + ").\n" +
			"Without a Lockstep binary, write `step=N path=P` to the file named by\n" +
			"LOCKSTEP_CHECKPOINT_ACK instead.",
		Args: args(0, ""),
	}
	fs := cmd.Flags()
	sock := fs.String("socket", os.Getenv(agent.EnvAgentSocket), "the node agent's socket")
	job := fs.String("job", os.Getenv("LOCKSTEP_JOB_ID"), "job ID")
	attempt := fs.Int("attempt", envInt("LOCKSTEP_ATTEMPT", 0), "attempt")
	rank := fs.Int("rank", envInt("RANK", -1), "rank")
	step := fs.Int64("step", -1, "training step of the checkpoint (required)")
	path := fs.String("path", "", "where the checkpoint is")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case *sock == "":
			return usagef("--socket (or %s) is required: run ckpt-done inside a rank, or write the ack file", agent.EnvAgentSocket)
		case *job == "":
			return usagef("--job (or LOCKSTEP_JOB_ID) is required")
		case *attempt < 1:
			return usagef("--attempt (or LOCKSTEP_ATTEMPT) is required")
		case *rank < 0:
			return usagef("--rank (or RANK) is required")
		case *step < 0:
			return usagef("--step is required")
		}
		// The token is read from the environment only: a flag would show it in
		// ps to every user of the node.
		reply, err := agent.SendAck(cmd.Context(), *sock, os.Getenv(agent.EnvAckToken),
			domain.CheckpointAck{JobID: *job, Attempt: *attempt, Rank: *rank, Step: *step, Path: *path})
		if err != nil {
			return err
		}
		if !reply.OK {
			return &exitError{code: 1, msg: "acknowledgement refused: " + clean(reply.Error)}
		}
		fmt.Fprintln(a.env.stdout, "acknowledged")
		return nil
	}
	return cmd
}

func (a *app) nodeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "node drain|resume|list",
		Long: "drain: no new work on NODE; its running gangs checkpoint and move elsewhere.\n" +
			"resume: return NODE to service. list: every node's state and GPU use.",
		Args: unknownSubcommand,
		RunE: func(*cobra.Command, []string) error {
			return usagef("node needs a subcommand: drain NODE --reason TEXT | resume NODE | list [-o json]")
		},
	}
	var reason string
	drain := &cobra.Command{
		Use:   "drain NODE",
		Short: "no new work on NODE; its running gangs checkpoint and move elsewhere",
		Args:  args(1, "NODE"),
		PreRunE: func(*cobra.Command, []string) error {
			if reason == "" {
				return usagef("node drain: --reason is required (it is shown to users whose jobs move)")
			}
			return nil
		},
		RunE: a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
			if err := c.DrainNode(ctx, args[0], reason); err != nil {
				return err
			}
			fmt.Fprintf(a.env.stdout, "node %s draining\n", clean(args[0]))
			return nil
		}),
	}
	drain.Flags().StringVar(&reason, "reason", "", "why (shown to users whose jobs move; required)")
	resume := &cobra.Command{
		Use:   "resume NODE",
		Short: "return NODE to service",
		Args:  args(1, "NODE"),
		RunE: a.clientRun(func(ctx context.Context, c *client.Client, args []string) error {
			if err := c.ResumeNode(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.env.stdout, "node %s resumed\n", clean(args[0]))
			return nil
		}),
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "every node's state and GPU use",
		Args:  args(0, ""),
		RunE:  a.clientRun(a.listNodes),
	}
	cmd.AddCommand(takes(drain, groupNATS), takes(resume, groupNATS), takes(list, groupNATS, groupOutput))
	return cmd
}

func (a *app) listNodes(ctx context.Context, c *client.Client, _ []string) error {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return err
	}
	if a.wantJSON() {
		return writeJSON(a.env, nodes)
	}
	tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tGPUS USED/TOTAL\tLEAF\tJOBS\tREASON")
	for _, n := range nodes {
		state := "up"
		switch {
		case !n.Up:
			state = "down"
		case n.State.Drained && n.GPUsUsed > 0:
			state = "draining"
		case n.State.Drained:
			state = "drained"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%d\t%s\n", clean(n.Node.Name), state, n.GPUsUsed, n.Node.GPUs, clean(n.Node.Leaf), len(n.Jobs), clean(n.State.Reason))
	}
	return tw.Flush()
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}
