package slurm

import "github.com/lockstep-dev/lockstep/shared/contract/slurmenv"

// Hostlists and filename patterns live in shared/contract/slurmenv, where
// the node agent uses them too; these names keep this package's callers
// as they were.

// PatternVars are a filename pattern's values (slurmenv.PatternVars).
type PatternVars = slurmenv.PatternVars

// MaxHostlistHosts bounds ExpandHostlist.
const MaxHostlistHosts = slurmenv.MaxHostlistHosts

// ExpandPattern expands an sbatch filename pattern (slurmenv.ExpandPattern).
func ExpandPattern(pattern string, v PatternVars) string { return slurmenv.ExpandPattern(pattern, v) }

// ExpandHostlist expands a Slurm hostlist (slurmenv.ExpandHostlist).
func ExpandHostlist(expr string) ([]string, error) { return slurmenv.ExpandHostlist(expr) }

// CompressHostlist writes names as a Slurm hostlist (slurmenv.CompressHostlist).
func CompressHostlist(names []string) (string, error) { return slurmenv.CompressHostlist(names) }
