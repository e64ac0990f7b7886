package jobspec

import (
	"strings"
	"testing"
)

// The length bounds are checked apart from the patterns: each side of
// every bound, and the patterns' own rules.
func TestNameRulesAtTheirBounds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		valid func(string) bool
		in    string
		ok    bool
	}{
		{"id", ValidBaseID, strings.Repeat("a", 63), true},
		{"id", ValidBaseID, strings.Repeat("a", 64), false},
		{"id", ValidBaseID, "a", true},
		{"id", ValidBaseID, "", false},
		{"id", ValidBaseID, "a-" + strings.Repeat("b", 61), true},
		{"id", ValidBaseID, "-a", false},
		{"id", ValidBaseID, "a-", false},
		{"id", ValidBaseID, "a_1", false},
		{"id", ValidBaseID, "A", false},
		{"env", ValidEnvName, "_" + strings.Repeat("A", 127), true},
		{"env", ValidEnvName, "_" + strings.Repeat("A", 128), false},
		{"env", ValidEnvName, "_", true},
		{"env", ValidEnvName, "", false},
		{"env", ValidEnvName, "1A", false},
		{"env", ValidEnvName, "A-B", false},
	} {
		if got := tc.valid(tc.in); got != tc.ok {
			t.Errorf("%s %q (%d bytes): valid %v, want %v", tc.name, tc.in, len(tc.in), got, tc.ok)
		}
	}
}
