package main

import (
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError turns pflag's parse error into a usage error (exit 2, printed
// once, with a one-line pointer at --help rather than the whole usage)
// and, for a misspelt long flag, suggests the flags cmd takes that are
// closest to it: `submit --wiat` says "did you mean --wait?".
func flagError(cmd *cobra.Command, err error) error {
	out := error(&usageError{msg: err.Error()})
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return out
	}
	var near []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && applies(cmd, f) && editDistance(name, f.Name) <= 2 {
			near = append(near, "--"+f.Name)
		}
	})
	if len(near) > 0 {
		out = errors.WithHintf(out, "did you mean %s?", strings.Join(near, " or "))
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
