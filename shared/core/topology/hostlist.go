package topology

import (
	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

// expandHostlist expands a Slurm hostlist expression ("n[01-04,07]") with
// the project's one hostlist parser, slurmenv's: Slurm's order and zero
// padding, bounded, duplicates kept (Spec validation reports them with
// context). Where a topology expects nodes or switches, an expression
// naming none is an error too.
func expandHostlist(expr string) ([]string, error) {
	hosts, err := slurmenv.ExpandHostlist(expr)
	if err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		return nil, errors.Newf("hostlist %q names no host", expr)
	}
	return hosts, nil
}
