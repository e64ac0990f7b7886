package main

import (
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// Global flags are the root command's persistent flags, declared once
// here: the connection (--nats, --creds, --tls-*, --context; --etcd,
// --etcd-*), the config file (--config) and the output format (-o). Each belongs to a group, and each
// command names the groups it takes (takes): a global flag given to a
// command outside its groups is refused, as an undefined flag, and left
// out of that command's help. `lockstep dev --nats URL` or `lockstep queue
// --etcd URL` would otherwise be accepted and silently ignored.
const (
	groupNATS   = "nats"   // reaches NATS: --nats, --creds, --tls-*, --context
	groupEtcd   = "etcd"   // reaches etcd too: --etcd, --etcd-ca, --etcd-cert, --etcd-key
	groupOutput = "output" // prints a table or JSON: -o
	groupConfig = "config" // reads or writes the config file: --config

	groupAnnotation = "lockstep/group"  // on a global flag: its group
	takesAnnotation = "lockstep/groups" // on a command: the groups it takes
)

// globals are one invocation's global flags.
type globals struct {
	// conn reads the connection flags (Resolve).
	conn   *connection.ConnFlags
	output choice
	// flags are the root's persistent flags.
	flags *pflag.FlagSet
}

// register adds the global flags to root as persistent flags.
func (g *globals) register(root *cobra.Command) {
	pfs := root.PersistentFlags()
	g.flags = pfs
	g.conn = connection.RegisterConnection(pfs, true)
	// The NATS-side flags are those config registers without etcd.
	natsSide := pflag.NewFlagSet("", pflag.ContinueOnError)
	connection.RegisterConnection(natsSide, false)
	pfs.VisitAll(func(f *pflag.Flag) {
		group := groupEtcd
		if natsSide.Lookup(f.Name) != nil {
			group = groupNATS
		}
		if f.Name == "config" { // dev and the config commands read it too
			group = groupConfig
		}
		_ = pfs.SetAnnotation(f.Name, groupAnnotation, []string{group})
	})
	g.output = choice{value: "table", allowed: outputFormats}
	pfs.VarP(&g.output, "output", "o", "output format: table, wide, json, yaml (csv: history)")
	_ = pfs.SetAnnotation("output", groupAnnotation, []string{groupOutput})
}

// takes names the global flag groups cmd accepts.
func takes(cmd *cobra.Command, groups ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[takesAnnotation] = strings.Join(groups, ",")
}

// applies reports whether cmd accepts f: every flag but a global one
// outside cmd's groups.
func applies(cmd *cobra.Command, f *pflag.Flag) bool {
	group := f.Annotations[groupAnnotation]
	if len(group) == 0 {
		return true
	}
	return slices.Contains(strings.Split(cmd.Annotations[takesAnnotation], ","), group[0])
}

// refuseGlobals refuses a global flag cmd does not take.
func refuseGlobals(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && !applies(cmd, f) {
			err = usagef("unknown flag: %s (%s does not take it)", flagName(f), cmd.CommandPath())
		}
	})
	if f := cmd.Flags().Lookup("output"); err == nil && f != nil && f.Changed {
		err = checkFormat(cmd, f.Value.String())
	}
	return err
}

// hideGlobals hides, while a command's usage is printed, the global flags
// it does not take.
func hideGlobals(usage func(*cobra.Command) error) func(*cobra.Command) error {
	return func(cmd *cobra.Command) error {
		var hidden []*pflag.Flag
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !applies(cmd, f) {
				f.Hidden = true
				hidden = append(hidden, f)
			}
		})
		defer func() {
			for _, f := range hidden {
				f.Hidden = false
			}
		}()
		return usage(cmd)
	}
}

// choice is a string flag with a fixed set of values; anything else is a
// bad flag value, refused when the command line is parsed.
type choice struct {
	value   string
	allowed []string
}

func (c *choice) String() string { return c.value }
func (c *choice) Type() string   { return "string" }

func (c *choice) Set(v string) error {
	if !slices.Contains(c.allowed, v) {
		return errors.Newf("not one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = v
	return nil
}

// oldNames are the flags that had one-letter names before the CLI moved
// to pflag: `--o json` and `--a` keep working, as the flag package allowed.
var oldNames = map[string]string{"o": "output", "a": "all", "f": "follow", "v": "verbose"}

func normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := oldNames[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// flagName is a flag as the user may have typed it.
func flagName(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + "/--" + f.Name
	}
	return "--" + f.Name
}

// args checks a command's positional arguments: exactly n, where what
// names the one argument n == 1 wants.
func args(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == n:
			return nil
		case n == 0:
			return usagef("%s takes no arguments, got %q", verb(cmd), args)
		}
		return usagef("%s takes one %s, got %d arguments", verb(cmd), what, len(args))
	}
}

// minArgs wants at least n arguments.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s takes at least %d %s, got %d", verb(cmd), n, what, len(args))
		}
		return nil
	}
}

// jobIDArg checks a command's one argument is a job ID (jobspec.ValidID:
// a lowercase DNS label, or an array task's ID_INDEX) before anything is
// dialled: a bad one would reach the server as a key it refuses.
func jobIDArg(cmd *cobra.Command, a []string) error {
	if err := args(1, "job ID")(cmd, a); err != nil {
		return err
	}
	return jobIDArgs(cmd, a)
}

// argsAnd checks a command's arguments together with the flags they go
// with (auth's): ok false is a usage error, "COMMAND: want".
func argsAnd(want string, ok func(args []string) bool) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if !ok(args) {
			return usagef("%s: %s", verb(cmd), want)
		}
		return nil
	}
}

// verb is a command's path without the binary's name: "node drain".
func verb(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}
