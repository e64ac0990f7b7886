package slurmenv

import (
	"math"
	"strconv"

	"github.com/cockroachdb/errors"
)

// IsDigits reports whether s is one or more ASCII digits: no sign, no
// spaces, nothing strconv would also take.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// NonNegativeInt parses a number as Slurm's parse_int reads option values
// and array indexes: digits only, below 2^31-1. The job spec's array
// indexes and the Slurm front ends' options share this one rule.
func NonNegativeInt(s string) (int, error) {
	if !IsDigits(s) {
		return 0, errors.Newf("%q is not a non-negative integer", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n >= math.MaxInt32 {
		return 0, errors.Newf("%q is too large", s)
	}
	return int(n), nil
}
