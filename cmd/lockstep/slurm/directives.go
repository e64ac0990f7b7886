package slurm

// Directives are sbatch's options, from #SBATCH lines and the command line
// (ParseScript, ParseOptions, Directives.Apply). A zero field was not
// given; Slurm's defaults are applied by JobSpec, not here, so a caller
// can tell "not given" from "given as the default".
type Directives struct {
	JobName string // -J, --job-name

	Nodes         int // -N, --nodes (a single count; min-max only when min == max)
	NTasks        int // -n, --ntasks
	NTasksPerNode int // --ntasks-per-node, --tasks-per-node
	CPUsPerTask   int // -c, --cpus-per-task

	// GPUsPerNode is --gpus-per-node=[type:]N, GRESGPU --gres=gpu[:type][:N];
	// Slurm refuses the two together.
	GPUsPerNode *GPUs
	GRESGPU     *GPUs
	GPUBind     string // --gpu-bind: closest or none

	Switches *Switches // --switches=N[@time]
	// TimeLimit is -t/--time, rounded up to whole minutes as sbatch does;
	// "0" is Unlimited.
	TimeLimit *Time
	Partition string // -p, --partition
	Priority  *int   // --priority
	Nice      *int   // --nice[=adjustment] (100 when given bare)

	Output string // -o, --output pattern (ExpandPattern)
	Error  string // -e, --error pattern
	Chdir  string // -D, --chdir
	Export *Export

	// Requeue is --requeue (true) or --no-requeue (false), the last given.
	Requeue         *bool
	RequeueExpedite bool // --requeue=expedite
	Signal          *Signal
	// Exclusive is --exclusive[=user|mcs|topo] ("exclusive" when bare or
	// =allocation); "oversubscribe" for --exclusive=oversubscribe.
	Exclusive  string
	Array      *Array      // -a, --array
	Dependency *Dependency // -d, --dependency
	// Container is pyxis's --container-image, --container-mounts,
	// --container-workdir and --container-env.
	Container Container

	Wait     bool // -W, --wait
	Parsable bool // --parsable
	TestOnly bool // --test-only
	Quiet    bool // -Q, --quiet
	Verbose  int  // -v, --verbose, once per -v
	Help     bool // -h, --help, --usage
	Version  bool // -V, --version

	// Warnings name each unsupported option skipped under
	// WithIgnoreUnsupported, with its line for a directive.
	Warnings []string
}
