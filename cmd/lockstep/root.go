package main

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
)

// newRoot builds the command tree of one invocation. Errors are printed
// once, by run, so cobra prints neither them nor the usage.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "lockstep",
		Short: "a gang scheduler for distributed training",
		Long: "Lockstep: a gang scheduler for distributed training.\n\n" +
			"Start with `lockstep dev`, then `lockstep submit docs/examples/hello.json --wait`.",
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseGlobals(cmd); err != nil {
				return err
			}
			return a.syncGoFlags(cmd)
		},
		SilenceErrors: true,
		SilenceUsage:  true,

		SuggestionsMinimumDistance: 2,
	}
	root.SetOut(a.env.stdout)
	root.SetErr(a.env.stderr)
	root.SetIn(a.env.stdin)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	root.SetUsageFunc(hideGlobals(root.UsageFunc()))
	a.globals.register(root)
	for _, g := range []struct {
		id, title string
		cmds      []*cobra.Command
	}{
		{"jobs", "Jobs:", []*cobra.Command{a.submitCmd(), a.queueCmd(), a.describeCmd(), a.logsCmd(), a.cancelCmd(),
			a.checkpointCmd(), a.traceCmd()}},
		{"cluster", "Cluster:", []*cobra.Command{a.nodeCmd(), a.topologyCmd(), a.statsCmd(), a.checkCmd(), a.authCmd()}},
		{"run", "Running Lockstep:", []*cobra.Command{a.devCmd(), a.admissionCmd(), a.placementCmd(), a.gangCmd(),
			a.drainCmd(), a.agentCmd(), a.healthcheckCmd()}},
		{"tools", "Tools:", []*cobra.Command{a.ckptDoneCmd(), a.loadtestCmd(), a.simulateCmd(), a.versionCmd()}},
	} {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, c := range g.cmds {
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	root.SetGlobalNormalizationFunc(normalize)
	return root
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  args(0, ""),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.env.stdout, "lockstep", version)
			return nil
		},
	}
}

// unknownCommand refuses a first word that names no command.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	err := usagef("unknown command %q", args[0])
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		err = errors.WithHintf(err, "did you mean %s?", strings.Join(s, " or "))
	}
	return err
}

// unknownSubcommand refuses a word after a command group (node, auth) that
// names none of its subcommands.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return usagef("%s: unknown subcommand %q (want %s)", verb(cmd), args[0], strings.Join(names, ", "))
}

// usageHint points a bad command line at its command's usage.
func usageHint(cmd *cobra.Command) string {
	line := cmd.UseLine()
	if cmd.HasAvailableSubCommands() {
		line = cmd.CommandPath() + " COMMAND [flags]"
	}
	return fmt.Sprintf("usage: %s (%s --help says more)", line, cmd.CommandPath())
}
