package slurm

import (
	"strconv"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

// positiveInt parses a decimal integer of at least 1 that fits Slurm's
// int options (below 2^31-1, as parse_int requires).
func positiveInt(s string) (int, error) {
	n, err := slurmenv.NonNegativeInt(s)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errors.Newf("%q must be at least 1", s)
	}
	return n, nil
}

// signedInt parses an optionally signed decimal integer.
func signedInt(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, errors.Newf("%q is not an integer", s)
	}
	return int(n), nil
}
