package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
)

func (a *app) topologyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "print the switch tree with free/total GPUs per switch",
		Long:  "Print the switch tree (core → spine → leaf → node) with free/total GPUs per switch.",
		Args:  args(0, ""),
		RunE: a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
			out, err := c.Topology(ctx)
			if err != nil {
				return err
			}
			fmt.Fprint(a.env.stdout, cleanLines(out))
			return nil
		}),
	}
	return takes(cmd, groupNATS)
}
