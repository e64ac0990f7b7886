// Package slurm reads Slurm batch jobs for Lockstep (issue 18): hostlists,
// time formats, sbatch's #SBATCH directives and command line, filename
// patterns, and their translation into a Lockstep job spec. It is pure:
// it reads the bytes of a script it is handed and does no other I/O.
//
// The pieces follow Slurm's own code and manual pages (hostlist.c,
// parse_time.c, proc_args.c, slurm_opt.c, sbatch's opt.c and sbatch(1)),
// and say where they are stricter than Slurm:
//
//   - ExpandHostlist and CompressHostlist: Slurm hostlist expressions, as
//     `scontrol show hostnames` and `scontrol show hostlist` print them.
//   - ParseTime, ParseSwitches, ParseSignal, ParseArray, ParseDependency,
//     ParseExport: option values.
//   - ParseScript, ParseOptions, Directives.Apply: the directives of a
//     script, and the command line over them.
//   - ExpandPattern: --output and --error filename patterns.
//   - Directives.JobSpec: the job spec.
//
// A sbatch front end uses them as sbatch does:
//
//	cmdline, operands, err := slurm.ParseOptions(args)  // find the script
//	d, err := slurm.ParseScript(script)                 // its #SBATCH lines
//	d, operands, err = d.Apply(args)                    // the command line wins
//	spec, err := d.JobSpec(command)
//
// Some directives have no job spec field of JobSpec's and stay in
// Directives for the front end (lockstep sbatch, cmd/lockstep's
// slurm_sbatch*.go), which fills batch, array, dependencies, singleton,
// workdir and the rest of env from them: --array, --dependency,
// --output, --error, --chdir (relative to the submit directory),
// --export's ALL, NONE and propagated names (they need the submitter's
// environment), --exclusive, --requeue=expedite, --signal's B: and R:
// flags, --wait, --parsable and --test-only, and the informational
// --quiet, --verbose, --help, --version. The front end's own options
// (its connection flags) are parsed among sbatch's with WithLongOption.
//
// Other sbatch options are refused by name (ErrUnsupported), or skipped
// with a warning under WithIgnoreUnsupported; an option sbatch itself
// does not have is always an error.
package slurm
