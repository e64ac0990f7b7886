package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

var commands = map[string]command{
	"dev":        {"run the whole system in one process (embedded NATS and etcd, simulated nodes)", runDev},
	"submit":     {"submit a job spec (JSON or YAML file, - for stdin)", runSubmit},
	"queue":      {"list jobs, like squeue", runQueue},
	"describe":   {"show a job: spec, placement per rank, event timeline", runDescribe},
	"trace":      {"print a job's trace as a waterfall (spans `lockstep dev` recorded)", runTrace},
	"logs":       {"print a job's rank output", runLogs},
	"cancel":     {"cancel a job", runCancel},
	"check":      {"verify the scheduler's safety invariants (exit 1 on violation)", runCheck},
	"checkpoint": {"checkpoint a running job and requeue it", runCheckpoint},
	"ckpt-done":  {"acknowledge a checkpoint (run by a training rank)", runCkptDone},
	"node":       {"node drain|resume|list", runNode},
	"topology":   {"print the switch tree with free/total GPUs per switch", runTopology},
	"stats":      {"cluster totals: jobs by state, cluster η, mean gang wait", runStats},
	"admission":  {"run the admission service", runAdmission},
	"placement":  {"run the placement service", runPlacement},
	"gang":       {"run the gang reservation service", runGang},
	"agent":      {"run a node agent", runAgent},
	"drain":      {"run the drain service", runDrain},
	"version":    {"print the version", runVersion},
	"auth":       {"make credentials: init an authority, issue identities, enroll nodes", runAuth},

	"healthcheck": {"exit 0 if NATS, etcd or an HTTP endpoint answers (container health checks)", runHealthcheck},
	"loadtest":    {"load-test the real services with thousands of simulated nodes (see docs/loadtest.md)", runLoadtest},
	"simulate":    {"replay a job trace through the scheduling policy and baselines in virtual time", runSimulate},
}

// newRoot builds the command tree of one invocation. Errors are printed
// once, by run, so cobra prints neither them nor the usage.
func newRoot(env *cliEnv) *cobra.Command {
	root := &cobra.Command{
		Use:   "lockstep",
		Short: "a gang scheduler for distributed training",
		Long: "Lockstep: a gang scheduler for distributed training.\n\n" +
			"Start with `lockstep dev`, then `lockstep submit docs/examples/hello.json --wait`.",
		Args:          unknownCommand,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SilenceErrors: true,
		SilenceUsage:  true,

		SuggestionsMinimumDistance: 2,
	}
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	root.SetIn(env.stdin)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	for name, c := range commands {
		root.AddCommand(&cobra.Command{
			Use:                name,
			Short:              c.summary,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return c.run(cmd.Context(), env, args)
			},
		})
	}
	return root
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

// usageHint points a bad command line at its command's usage.
func usageHint(cmd *cobra.Command) string {
	line := cmd.UseLine()
	if cmd.HasAvailableSubCommands() {
		line = cmd.CommandPath() + " COMMAND [flags]"
	}
	return fmt.Sprintf("usage: %s (%s --help says more)", line, cmd.CommandPath())
}

func runVersion(_ context.Context, env *cliEnv, _ []string) error {
	fmt.Fprintln(env.stdout, "lockstep", version)
	return nil
}
