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
// Some directives have no job spec field yet and stay in Directives for
// the pieces of issue 18 that act on them: --array, --dependency,
// --output, --error, --chdir (JobSpec leaves workdir to the caller, which
// knows the submit directory a relative --chdir is under), --export's ALL,
// NONE and propagated names (JobSpec writes only NAME=value items: the
// rest needs the submitter's environment), --exclusive, --requeue=expedite,
// --signal's B: and R: flags, --wait, --parsable and --test-only (what the
// front end does), and the informational --quiet, --verbose, --help,
// --version.
//
// Other sbatch options are refused by name (ErrUnsupported), or skipped
// with a warning under WithIgnoreUnsupported; an option sbatch itself
// does not have is always an error.
package slurm
