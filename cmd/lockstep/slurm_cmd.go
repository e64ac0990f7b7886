package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// The Slurm commands (docs/slurm.md) parse their own command line: Slurm's
// -h is --noheader and -o is the format, where the root's are help and
// the output format, so cobra's parsing is off for them (slurmCommand)
// and each parses a flag set of its own, which also has the connection
// flags. --help is their help.

// slurmNames are the commands the binary answers to under their own name
// (shimArgs) and that slurm-shims links.
var slurmNames = slurmenv.Commands

// shimArgs is the command line of a binary started as argv0: run as
// `squeue` (a slurm-shims link), it is `lockstep squeue`.
func shimArgs(argv0 string, args []string) []string {
	name := filepath.Base(argv0)
	if slices.Contains(slurmNames, name) {
		return append([]string{name}, args...)
	}
	return args
}

// slurmCommand sets cmd up as a Slurm command whose flags are fs, with
// the connection flags, and returns its RunE: parse, then run.
func (a *app) slurmCommand(cmd *cobra.Command, fs *pflag.FlagSet, long string, run func(cmd *cobra.Command, args []string) error) runE {
	cmd.DisableFlagParsing = true
	cmd.Long = long
	conn := connection.RegisterConnection(fs, false)
	// -h is help unless the command has Slurm's -h (squeue's and sinfo's
	// --noheader).
	var help *bool
	if fs.ShorthandLookup("h") == nil {
		help = fs.BoolP("help", "h", false, "show this help")
	} else {
		help = fs.Bool("help", false, "show this help")
	}
	fs.SortFlags = false
	showHelp := func() {
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "%s\n\nUsage:\n  %s [flags]\n\nFlags:\n%s", long, cmd.CommandPath(), fs.FlagUsages())
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) { showHelp() })
	return func(cmd *cobra.Command, args []string) error {
		if err := fs.Parse(args); err != nil {
			return usagef("%s: %v", cmd.Name(), err)
		}
		if *help {
			showHelp()
			return nil
		}
		a.globals.conn = conn
		return run(cmd, fs.Args())
	}
}

// slurmFlags is a Slurm command's flag set: errors returned, not printed.
func slurmFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	return fs
}

// withClient dials and runs f.
func (a *app) withClient(ctx context.Context, f func(c *client.Client) error) error {
	c, err := a.dial(ctx)
	if err != nil {
		return err
	}
	return f(c)
}

// splitList splits a comma-separated option value (Slurm's lists, auth
// server-cert's --hosts) into its items, blank ones dropped.
func splitList(s string) []string {
	var out []string
	for _, w := range strings.Split(s, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// slurmShims links the Slurm commands' names to this binary in DIR.
func (a *app) slurmShims(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Make DIR/squeue, scancel, sinfo, sacct, scontrol, sbatch and srun links to this
		binary, which acts as ` + "`lockstep NAME`" + ` when run under NAME. Put DIR on PATH
		and Slurm scripts and users call Lockstep. Existing links are replaced;
		another file of one of those names is an error, and is left as it is.`)
	target := cmd.Flags().String("target", "", "binary the links point at (default: this one)")
	return func(_ *cobra.Command, args []string) error {
		bin := *target
		if bin == "" {
			exe, err := os.Executable()
			if err != nil {
				return errors.Wrap(err, "finding this binary (give --target)")
			}
			bin = exe
		}
		bin, err := filepath.Abs(bin)
		if err != nil {
			return errors.Wrapf(err, "--target %s", bin)
		}
		// A target may be where the binary will be (an image, another
		// mount), so its absence is not an error; but say so, or every
		// Slurm command would fail later, far from here.
		if info, err := os.Stat(bin); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			fmt.Fprintf(a.env.stderr, "lockstep: warning: --target %s is not an executable file here; the links work only where it is\n", bin)
		}
		dir := args[0]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return errors.Wrapf(err, "creating %s", dir)
		}
		for _, name := range slurmNames {
			p := filepath.Join(dir, name)
			if fi, err := os.Lstat(p); err == nil {
				if fi.Mode()&os.ModeSymlink == 0 {
					return errors.Newf("%s exists and is not a link; not replaced", p)
				}
				if err := os.Remove(p); err != nil {
					return errors.Wrapf(err, "replacing %s", p)
				}
			}
			if err := os.Symlink(bin, p); err != nil {
				return errors.Wrapf(err, "linking %s", p)
			}
			fmt.Fprintf(a.env.stdout, "%s -> %s\n", clean(p), clean(bin))
		}
		return nil
	}
}
