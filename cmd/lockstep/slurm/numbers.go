package slurm

import (
	"math"
	"strconv"

	"github.com/cockroachdb/errors"
)

func isDigits(s string) bool {
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

// positiveInt parses a decimal integer of at least 1 that fits Slurm's
// int options (below 2^31-1, as parse_int requires).
func positiveInt(s string) (int, error) {
	n, err := nonNegativeInt(s)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errors.Newf("%q must be at least 1", s)
	}
	return n, nil
}

func nonNegativeInt(s string) (int, error) {
	if !isDigits(s) {
		return 0, errors.Newf("%q is not a non-negative integer", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n >= math.MaxInt32 {
		return 0, errors.Newf("%q is too large", s)
	}
	return int(n), nil
}

// signedInt parses an optionally signed decimal integer.
func signedInt(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, errors.Newf("%q is not an integer", s)
	}
	return int(n), nil
}
