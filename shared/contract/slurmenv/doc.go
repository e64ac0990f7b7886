// Package slurmenv is what Slurm scripts read that Lockstep must write as
// Slurm does: hostlists (SLURM_JOB_NODELIST, `scontrol show hostnames`)
// and filename patterns (sbatch --output/--error); and the number syntax
// Lockstep must read as Slurm does (NonNegativeInt). The node agent, which
// names a batch job's output files and sets a job's SLURM_* variables,
// the Slurm front ends in cmd/lockstep and the job spec's array indexes
// share this one copy.
package slurmenv

// Commands are the Slurm commands the lockstep binary answers to under
// their own names: `lockstep slurm-shims DIR` links them, and so does
// every node agent, in a directory first on its jobs' PATH.
var Commands = []string{"sbatch", "srun", "squeue", "scancel", "sinfo", "sacct", "scontrol"}
