package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
)

// command is one command of the tree: where the root's help lists it, its
// usage line and summary, the arguments and the global flag groups it
// takes (takes), and its build, which adds its flags and long help and
// returns what it runs.
type command struct {
	group, use, short string
	args              cobra.PositionalArgs
	takes             []string
	build             func(*app, *cobra.Command) runE
}

// runE is a cobra RunE.
type runE = func(*cobra.Command, []string) error

// The global flag groups commands take.
// Whatever reaches the cluster reads the config file's contexts.
var (
	onNATS        = []string{groupNATS, groupConfig}
	onNATSOut     = []string{groupNATS, groupConfig, groupOutput}
	onNATSEtcd    = []string{groupNATS, groupEtcd, groupConfig}
	onNATSEtcdOut = []string{groupNATS, groupEtcd, groupConfig, groupOutput}
	outOnly       = []string{groupOutput}
	onConfig      = []string{groupConfig}
	onConfigOut   = []string{groupConfig, groupOutput}
)

// groups are the root's help sections, in order.
var groups = []*cobra.Group{
	{ID: "jobs", Title: "Jobs:"}, {ID: "cluster", Title: "Cluster:"},
	{ID: "slurm", Title: "Slurm commands (docs/slurm.md):"},
	{ID: "run", Title: "Running Lockstep:"}, {ID: "tools", Title: "Tools:"},
}

// commands are the root's commands; node and auth list their own.
var commands = []command{
	{"jobs", "submit FILE|DIR|-...", "submit job specs (JSON or YAML files, a directory of them, - for stdin)", minArgs(1, "FILE, DIR or -"), onNATS, (*app).submit},
	{"jobs", "queue", "list jobs, like squeue", args(0, ""), onNATSOut, (*app).queue},
	{"jobs", "describe ID", "show a job: spec, placement per rank, event timeline", jobIDArg, onNATSOut, (*app).describe},
	{"jobs", "logs ID", "print a job's rank output", jobIDArg, onNATS, (*app).logs},
	{"jobs", "cancel [ID...]", "cancel jobs: by ID, or every job -u, --state, --queue select", jobIDArgs, onNATS, (*app).cancel},
	{"jobs", "checkpoint ID", "checkpoint a running job and requeue it", jobIDArg, onNATS, (*app).checkpoint},
	{"jobs", "history", "job accounting, like sacct: times, GPU-hours, exit, η per job over a window", args(0, ""), onNATSOut, (*app).history},
	{"jobs", "trace JOB_ID", "print a job's trace as a waterfall (spans `lockstep dev` recorded)", jobIDArg, outOnly, (*app).trace},
	{"slurm", "sbatch [OPTIONS] [SCRIPT [ARGS]]", "submit a batch script as Slurm's sbatch does (#SBATCH directives, --wait, --parsable)", cobra.ArbitraryArgs, nil, (*app).sbatch},
	{"slurm", "squeue", "list jobs as Slurm's squeue does (-u, -j, -t, -h, -o FORMAT)", cobra.ArbitraryArgs, nil, (*app).squeue},
	{"slurm", "scancel", "cancel jobs as Slurm's scancel does (ID..., -u, -t, --signal)", cobra.ArbitraryArgs, nil, (*app).scancel},
	{"slurm", "sacct", "job accounting as Slurm's sacct shows it (-j, -u, -S, -o FIELDS)", cobra.ArbitraryArgs, nil, (*app).sacct},
	{"slurm", "sinfo", "partitions (queues) and node states as Slurm's sinfo shows them (-N, -h, -o)", cobra.ArbitraryArgs, nil, (*app).sinfo},
	{"slurm", "srun", "run a step of tasks across a batch job's allocation (inside its script)", cobra.ArbitraryArgs, nil, (*app).srun},
	{"slurm", "scontrol", "scontrol show hostnames|hostlist|job|node", cobra.ArbitraryArgs, nil, (*app).scontrol},
	{"slurm", "slurm-shims DIR", "link squeue, scancel, sinfo, sacct, scontrol, sbatch, srun in DIR to this binary", args(1, "DIR"), nil, (*app).slurmShims},
	{"cluster", "node", "node drain|resume|list", unknownSubcommand, nil, (*app).node},
	{"cluster", "topology", "print the switch tree with free/total GPUs per switch", args(0, ""), onNATS, (*app).topology},
	{"cluster", "stats", "cluster totals: jobs by state, cluster η, mean gang wait", args(0, ""), onNATSOut, (*app).stats},
	{"cluster", "usage", "GPU-hours, jobs, mean gang wait and η per user and queue over a window, like sreport", args(0, ""), onNATSOut, (*app).usage},
	{"cluster", "check", "verify the scheduler's safety invariants (exit 1 on violation)", args(0, ""), onNATSEtcdOut, (*app).check},
	{"cluster", "auth", "make credentials: init an authority, issue identities, enroll nodes", unknownSubcommand, nil, (*app).auth},
	{"run", "dev", "run the whole system in one process (embedded NATS and etcd, simulated nodes)", args(0, ""), onConfig, (*app).dev},
	{"run", "admission", "run the admission service", args(0, ""), onNATSEtcd, (*app).admission},
	{"run", "placement", "run the placement service", args(0, ""), onNATSEtcd, (*app).placement},
	{"run", "gang", "run the gang reservation service", args(0, ""), onNATSEtcd, (*app).gang},
	{"run", "drain", "run the drain service", args(0, ""), onNATSEtcd, (*app).drain},
	{"run", "agent", "run a node agent", args(0, ""), onNATSEtcd, (*app).agent},
	{"run", "web", "serve the dashboard (fabric, queue, jobs, cluster); web token: sign-in token", args(0, ""), onNATSEtcd, (*app).web},
	{"run", "healthcheck [--url URL] [--nats URL] [--etcd URL [--node NAME]] [--timeout D]",
		"exit 0 if NATS, etcd or an HTTP endpoint answers (container health checks)", args(0, ""), nil, (*app).healthcheck},
	{"tools", "config", "contexts of the config file: get-contexts|current-context|use-context|set-context|delete-context", unknownSubcommand, nil, (*app).config},
	{"tools", "ckpt-done", "acknowledge a checkpoint (run by a training rank)", args(0, ""), nil, (*app).ckptDone},
	{"tools", "loadtest", "load-test the real services with thousands of simulated nodes (see docs/loadtest.md)", args(0, ""), onNATSEtcd, (*app).loadtest},
	{"tools", "simulate", "replay a job trace through the scheduling policy and baselines in virtual time", args(0, ""), nil, (*app).simulate},
	{"tools", "version", "print the version", args(0, ""), nil, (*app).version},
}

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
			return refuseGlobals(cmd)
		},
		SilenceErrors: true,
		SilenceUsage:  true,

		SuggestionsMinimumDistance: 2,
	}
	root.SetOut(a.env.stdout)
	root.SetErr(a.env.stderr)
	root.SetIn(a.env.stdin)
	root.SetFlagErrorFunc(flagError)
	// The usage template's functions are registered once (helpflags.go).
	root.SetUsageTemplate(strings.NewReplacer(
		"{{rpad .Name .NamePadding }}", "{{rpad .Name (namePad .)}}",
		".LocalFlags.FlagUsages", "alignedFlags . true",
		".InheritedFlags.FlagUsages", "alignedFlags . false",
	).Replace(root.UsageTemplate()))
	root.SetUsageFunc(hideGlobals(root.UsageFunc()))
	a.globals.register(root)
	a.add(root, commands)
	root.AddGroup(shownGroups(root)...)
	a.registerCompletions(root)
	root.SetGlobalNormalizationFunc(normalize)
	return root
}

// shownGroups are the groups that have a command help lists (the client
// build hides the "Running Lockstep" ones).
func shownGroups(root *cobra.Command) []*cobra.Group {
	var out []*cobra.Group
	for _, g := range groups {
		for _, c := range root.Commands() {
			if c.GroupID == g.ID && !c.Hidden {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// add builds commands and adds them to parent.
func (a *app) add(parent *cobra.Command, commands []command) {
	for _, c := range commands {
		cmd := &cobra.Command{GroupID: c.group, Use: c.use, Short: c.short, Args: c.args}
		takes(cmd, c.takes...)
		cmd.RunE = c.build(a, cmd)
		parent.AddCommand(cmd)
	}
}

func (a *app) version(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Print the version: the one the release build set (-ldflags "-X main.version=...",
		deploy/build.sh: git describe), else the module version or the VCS revision
		Go recorded in the binary (go install, go build in a checkout), the Go
		version it was built with, and "client build" for the CLI built alone
		(-tags lockstep_client).`)
	return func(*cobra.Command, []string) error {
		info, _ := debug.ReadBuildInfo()
		fmt.Fprintln(a.env.stdout, "lockstep", versionString(version, info))
		return nil
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
