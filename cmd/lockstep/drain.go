package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func runCheckpoint(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "checkpoint", "ID [flags]",
		"Ask a running job to checkpoint, then requeue it to resume from that checkpoint\n"+
			"(its GPUs are freed as soon as every rank acknowledges).")
	nats := natsFlag(fs)
	reason := fs.String("reason", "checkpoint requested", "why (shown in describe)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("checkpoint takes one job ID")
	}
	c, err := dial(ctx, nats)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := waitJob(ctx, c, pos[0]); err != nil {
		return err
	}
	if err := c.Drain(ctx, pos[0], domain.DrainCheckpoint, domain.ThenRequeue, *reason); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "checkpoint requested for %s\n", clean(pos[0]))
	return nil
}

// runCkptDone is what a training script runs after writing a checkpoint.
// It holds no bus credentials: the ack goes to the node's agent over its
// socket, with the attempt's token, and the agent forwards it.
func runCkptDone(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "ckpt-done", "[flags]",
		"Acknowledge a checkpoint from inside a rank (after the checkpoint signal).\n"+
			"The ack goes to the node's agent, which forwards it. Job, attempt, rank,\n"+
			"the agent's socket and the attempt's token come from the rank's environment\n"+
			"(LOCKSTEP_JOB_ID, LOCKSTEP_ATTEMPT, RANK, "+agent.EnvAgentSocket+", "+agent.EnvAckToken+").\n"+
			"Without a Lockstep binary, write `step=N path=P` to the file named by\n"+
			"LOCKSTEP_CHECKPOINT_ACK instead.")
	sock := fs.String("socket", os.Getenv(agent.EnvAgentSocket), "the node agent's socket")
	job := fs.String("job", os.Getenv("LOCKSTEP_JOB_ID"), "job ID")
	attempt := fs.Int("attempt", envInt("LOCKSTEP_ATTEMPT", 0), "attempt")
	rank := fs.Int("rank", envInt("RANK", -1), "rank")
	step := fs.Int64("step", -1, "training step of the checkpoint (required)")
	path := fs.String("path", "", "where the checkpoint is")
	if err := fs.Parse(args); err != nil {
		return err
	}
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
	reply, err := agent.SendAck(ctx, *sock, os.Getenv(agent.EnvAckToken),
		domain.CheckpointAck{JobID: *job, Attempt: *attempt, Rank: *rank, Step: *step, Path: *path})
	if err != nil {
		return err
	}
	if !reply.OK {
		return &exitError{code: 1, msg: "acknowledgement refused: " + clean(reply.Error)}
	}
	fmt.Fprintln(env.stdout, "acknowledged")
	return nil
}

func runNode(ctx context.Context, env *cliEnv, args []string) error {
	usage := "node drain NODE --reason TEXT | node resume NODE | node list [-o json]"
	if len(args) == 0 {
		return usagef("usage: lockstep %s", usage)
	}
	sub, rest := args[0], args[1:]
	fs := newFlags(env, "node "+sub, "[NODE] [flags]",
		"drain: no new work on NODE; its running gangs checkpoint and move elsewhere.\n"+
			"resume: return NODE to service. list: every node's state and GPU use.")
	nats := natsFlag(fs)
	reason := fs.String("reason", "", "why (drain)")
	out := outputFlag(fs)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	c, err := dial(ctx, nats)
	if err != nil {
		return err
	}
	defer c.Close()
	switch {
	case sub == "drain" && len(pos) == 1:
		if *reason == "" {
			return usagef("node drain: --reason is required (it is shown to users whose jobs move)")
		}
		if err := c.DrainNode(ctx, pos[0], *reason); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "node %s draining\n", clean(pos[0]))
	case sub == "resume" && len(pos) == 1:
		if err := c.ResumeNode(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "node %s resumed\n", clean(pos[0]))
	case sub == "list" && len(pos) == 0:
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		if *out == "json" {
			return writeJSON(env, nodes)
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
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
	default:
		return usagef("usage: lockstep %s", usage)
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}
