package main

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The usage template's functions (newRoot's template), registered once:
// cobra keeps them in a package-wide map, which commands run concurrently
// (tests) must not write while another reads it.
//
//   - namePad keeps two spaces at least between a command's name and its
//     summary: cobra pads names to 11 characters and adds one, which ran
//     an 11-character name (slurm-shims, enroll-node) into its summary.
//   - alignedFlags lists a command's flags in one column (below).
func init() {
	cobra.AddTemplateFuncs(map[string]any{
		"namePad":      func(c *cobra.Command) int { return c.NamePadding() + 1 },
		"alignedFlags": alignedFlags,
	})
}

// alignedFlags is a command's local (local true) or global flags as its
// help lists them, in one column with the other section's: pflag aligns
// each section on its own, so "Flags:" and "Global Flags:" had their
// descriptions in different columns. Both sections are rendered as one
// set and split again by flag.
func alignedFlags(cmd *cobra.Command, local bool) string {
	both := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	both.SortFlags = false
	mine := map[string]bool{}
	add := func(fs *pflag.FlagSet, isLocal bool) {
		fs.VisitAll(func(f *pflag.Flag) {
			if both.Lookup(f.Name) == nil {
				both.AddFlag(f)
				mine[f.Name] = isLocal == local
			}
		})
	}
	add(cmd.LocalFlags(), true)
	add(cmd.InheritedFlags(), false)
	var out []string
	keep := false
	for _, line := range strings.Split(both.FlagUsages(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			keep = mine[m[1]]
		}
		if keep {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// flagLine is the first line of a flag in pflag's FlagUsages.
var flagLine = regexp.MustCompile(`^(?:  -\S, |      )--([^\s=]+)`)
