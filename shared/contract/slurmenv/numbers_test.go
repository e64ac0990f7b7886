package slurmenv

import "testing"

// NonNegativeInt takes what Slurm's parse_int takes for option values and
// array indexes: digits only (no sign, no space), below 2^31-1.
func TestNonNegativeInt(t *testing.T) {
	checkParse(t, "NonNegativeInt", NonNegativeInt, "0", 0)
	checkParse(t, "NonNegativeInt", NonNegativeInt, "007", 7)
	checkParse(t, "NonNegativeInt", NonNegativeInt, "2147483646", 2147483646)
	for _, in := range []string{"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "2147483647", "99999999999999999999"} {
		if n, err := NonNegativeInt(in); err == nil {
			t.Errorf("NonNegativeInt(%q) = %d, want an error", in, n)
		}
	}
}
