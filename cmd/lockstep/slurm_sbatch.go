package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

const sbatchLong = `Submit a batch script as Slurm's sbatch does (docs/slurm.md, "sbatch").

  sbatch [OPTIONS] [SCRIPT [ARGS...]]     the script from stdin when none is given

The script's #SBATCH lines, up to its first command, are options; the command
line's win over them. The script runs once, on the first node of the job's
gang, in -D/--chdir or the directory sbatch runs in. Prints "Submitted batch
job ID".

Options (sbatch's): -J/--job-name, -N/--nodes, -n/--ntasks, --ntasks-per-node,
--gpus-per-node, --gres=gpu:N, -c/--cpus-per-task, --gpu-bind, --switches,
-t/--time, -p/--partition, --priority, --nice, -o/--output, -e/--error,
-D/--chdir, --export, --requeue, --no-requeue, --signal, --exclusive,
-a/--array, -d/--dependency, -W/--wait, --parsable, --test-only, -Q/--quiet,
-v/--verbose (prints the job spec), -h/--help, -V/--version. Any other sbatch
option is an error naming it.

Lockstep's: --ignore-unsupported (warn about unsupported options instead of
refusing them), --nats, --creds, --tls-ca, --tls-cert, --tls-key (the
connection; sbatch's own --context is refused, so name a context with
LOCKSTEP_CONTEXT).`

// connectionOptions are the connection flags sbatch takes among its
// options; --context is sbatch's (an SELinux context).
var connectionOptions = []string{"nats", "creds", "tls-ca", "tls-cert", "tls-key"}

func (a *app) sbatch(cmd *cobra.Command) runE {
	cmd.DisableFlagParsing = true
	cmd.DisableFlagsInUseLine = true
	cmd.Long = sbatchLong
	help := func(cmd *cobra.Command) {
		fmt.Fprintf(cmd.OutOrStdout(), "%s\n\nUsage:\n  %s [OPTIONS] [SCRIPT [ARGS...]]\n", sbatchLong, cmd.CommandPath())
	}
	cmd.SetHelpFunc(func(cmd *cobra.Command, _ []string) { help(cmd) })
	fs := slurmFlags("sbatch")
	conn := connection.RegisterConnection(fs, false)
	return func(cmd *cobra.Command, args []string) error {
		a.globals.conn = conn
		d, sc, ignore, err := parseSbatch(args, fs.Set, a.readBatchScript)
		switch {
		case err != nil:
			return err
		case d.Help:
			help(cmd)
			return nil
		case d.Version:
			fmt.Fprintln(a.env.stdout, "lockstep", version, "(sbatch)")
			return nil
		}
		return a.sbatchSubmit(cmd.Context(), d, sc, ignore)
	}
}

// parseSbatch parses an sbatch command line and its script as sbatch
// does: the command line finds the script (read reads it), whose #SBATCH
// lines the command line then overrides. setConn takes Lockstep's
// connection options. A bad command line is a usage error; a bad script
// an error naming the script and line. With -h or -V it returns before
// reading a script.
func parseSbatch(args []string, setConn func(name, value string) error, read func(operands []string) (sbatchScript, error)) (slurm.Directives, sbatchScript, bool, error) {
	ignore := false
	own := []slurm.Option{slurm.WithLongOption("ignore-unsupported", false, func(string) error { ignore = true; return nil })}
	for _, name := range connectionOptions {
		own = append(own, slurm.WithLongOption(name, true, func(v string) error { return setConn(name, v) }))
	}
	// The first pass finds the script and Lockstep's own options; an
	// unsupported option is judged by the second, once it is known
	// whether --ignore-unsupported was given.
	cl, operands, err := slurm.ParseOptions(args, append(own, slurm.WithIgnoreUnsupported())...)
	if err != nil {
		return slurm.Directives{}, sbatchScript{}, false, usagef("sbatch: %v", err)
	}
	if cl.Help || cl.Version {
		return cl, sbatchScript{}, ignore, nil
	}
	sc, err := read(operands)
	if err != nil {
		return slurm.Directives{}, sbatchScript{}, false, err
	}
	var scriptOpts []slurm.Option
	if ignore {
		scriptOpts = []slurm.Option{slurm.WithIgnoreUnsupported()}
	}
	d, err := slurm.ParseScript(sc.text, scriptOpts...)
	if err != nil {
		return slurm.Directives{}, sbatchScript{}, false, errors.Wrapf(err, "sbatch: %s", sc.name)
	}
	if d, _, err = d.Apply(args, append(own, scriptOpts...)...); err != nil {
		return slurm.Directives{}, sbatchScript{}, false, usagef("sbatch: %v", err)
	}
	return d, sc, ignore, nil
}

// readBatchScript reads the script named by the first operand, or stdin
// without one; the rest are its arguments.
func (a *app) readBatchScript(operands []string) (sbatchScript, error) {
	return readBatchScript(a.env.stdin, operands)
}

func readBatchScript(stdin io.Reader, operands []string) (sbatchScript, error) {
	read := func(r io.Reader) ([]byte, error) {
		return io.ReadAll(io.LimitReader(r, slurm.MaxScriptBytes+1)) // ParseScript refuses more
	}
	if len(operands) == 0 {
		text, err := read(stdin)
		if err != nil {
			return sbatchScript{}, errors.Wrap(err, "sbatch: reading the batch script from stdin")
		}
		// Slurm's name for a job whose script came on stdin.
		return sbatchScript{text: text, name: "sbatch"}, nil
	}
	f, err := os.Open(operands[0])
	if err != nil {
		return sbatchScript{}, errors.Wrap(err, "sbatch: unable to open the batch script")
	}
	defer f.Close()
	text, err := read(f)
	if err != nil {
		return sbatchScript{}, errors.Wrapf(err, "sbatch: reading %s", operands[0])
	}
	return sbatchScript{text: text, name: filepath.Base(operands[0]), args: operands[1:]}, nil
}

// sbatchSubmit builds the spec and submits it (or, with --test-only,
// asks where it would start), printing as sbatch prints.
func (a *app) sbatchSubmit(ctx context.Context, d slurm.Directives, sc sbatchScript, ignore bool) error {
	env := a.env
	warn := func(msgs []string) {
		if d.Quiet {
			return // sbatch -Q: errors only
		}
		for _, w := range msgs {
			fmt.Fprintf(env.stderr, "sbatch: warning: %s\n", clean(w))
		}
	}
	warn(d.Warnings)
	sub, err := submitterHere()
	if err != nil {
		return err
	}
	spec, raw, warnings, err := sbatchSpec(d, sc, sub, ignore)
	if err != nil {
		return errors.Wrap(err, "sbatch")
	}
	warn(warnings)
	if d.Verbose > 0 {
		fmt.Fprintf(env.stderr, "sbatch: job spec: %s\n", clean(string(raw)))
	}
	c, err := a.dial(ctx)
	if err != nil {
		return err
	}
	if d.TestOnly {
		return printTestOnly(ctx, env, c, raw)
	}
	id, err := c.Submit(ctx, raw)
	if err != nil {
		return errors.Wrap(err, "sbatch: submitting the batch job")
	}
	switch {
	case d.Quiet:
	case d.Parsable:
		fmt.Fprintln(env.stdout, clean(id))
	default:
		fmt.Fprintf(env.stdout, "Submitted batch job %s\n", clean(id))
	}
	switch {
	case !d.Wait:
		return nil
	case spec.Array != nil:
		return sbatchWaitArray(ctx, c, id, *spec.Array)
	}
	return sbatchWait(ctx, c, id)
}

// submitterHere is where this sbatch runs.
func submitterHere() (sbatchSubmitter, error) {
	dir, err := os.Getwd()
	if err != nil {
		return sbatchSubmitter{}, errors.Wrap(err, "sbatch: the current directory (SLURM_SUBMIT_DIR)")
	}
	host, err := os.Hostname()
	if err != nil {
		return sbatchSubmitter{}, errors.Wrap(err, "sbatch: this host's name (SLURM_SUBMIT_HOST)")
	}
	return sbatchSubmitter{dir: dir, host: host, environ: os.Environ()}, nil
}
