//go:build !lockstep_client

package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
)

// ckptDone is what a training script runs after writing a checkpoint.
// It holds no bus credentials: the ack goes to the node's agent over its
// socket, with the attempt's token, and the agent forwards it.
func (a *app) ckptDone(cmd *cobra.Command) runE {
	cmd.Long = "Acknowledge a checkpoint from inside a rank (after the checkpoint signal).\n" +
		"The ack goes to the node's agent, which forwards it. Job, attempt, rank,\n" +
		"the agent's socket and the attempt's token come from the rank's environment\n" +
		"(" + rankenv.JobID + ", " + rankenv.Attempt + ", " + rankenv.Rank + ", " + rankenv.AgentSocket + ", " + rankenv.AckToken + ").\n" +
		"Without a Lockstep binary, write `step=N path=P` to the file named by\n" +
		rankenv.CheckpointAck + " instead."
	fs := cmd.Flags()
	sock := fs.String("socket", os.Getenv(rankenv.AgentSocket), "the node agent's socket")
	job := fs.String("job", os.Getenv(rankenv.JobID), "job ID")
	attempt := fs.Int("attempt", envInt(rankenv.Attempt, 0), "attempt")
	rank := fs.Int("rank", envInt(rankenv.Rank, -1), "rank")
	step := fs.Int64("step", -1, "training step of the checkpoint (required)")
	path := fs.String("path", "", "where the checkpoint is")
	return func(cmd *cobra.Command, _ []string) error {
		switch {
		case *sock == "":
			return usagef("--socket (or %s) is required: run ckpt-done inside a rank, or write the ack file", rankenv.AgentSocket)
		case *job == "":
			return usagef("--job (or %s) is required", rankenv.JobID)
		case *attempt < 1:
			return usagef("--attempt (or %s) is required", rankenv.Attempt)
		case *rank < 0:
			return usagef("--rank (or %s) is required", rankenv.Rank)
		case *step < 0:
			return usagef("--step is required")
		}
		// The token is read from the environment only: a flag would show it in
		// ps to every user of the node.
		reply, err := agent.SendAck(cmd.Context(), *sock, os.Getenv(rankenv.AckToken),
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
}
