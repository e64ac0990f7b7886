//go:build !lockstep_client

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

// cliReference renders docs/cli.md from the command tree: every command
// (hidden ones and cobra's own help left out) with its usage, its long
// help and its flags, in the order `lockstep --help` lists them. Values
// that depend on where it runs (the working directory, the home
// directory) are written as $PWD and ~, so the page is the same on every
// machine.
func cliReference(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("# CLI reference\n\n")
	b.WriteString("Generated from the command tree (`LOCKSTEP_UPDATE_DOCS=1 go test -run TestDocsCLIIsTheCommandTree ./cmd/lockstep`);\n")
	b.WriteString("a test fails when it differs from the commands. Every command prints the same with `--help`,\n")
	b.WriteString("with nothing running. Exit codes: 0 success, 1 failure (or the job failed, with `--wait`),\n")
	b.WriteString("2 usage error.\n\n")
	b.WriteString("This is the full build. The client build, for login nodes and pipelines\n")
	b.WriteString("(`CGO_ENABLED=0 go build -tags lockstep_client -o lockstep ./cmd/lockstep`), has the job,\n")
	b.WriteString("cluster, Slurm, config and version commands and starts in a quarter of the time: it leaves\n")
	b.WriteString("out `dev`, the services, `web`, `healthcheck`, `auth`, `check`, `node remove`, `loadtest`,\n")
	b.WriteString("`simulate`, `trace`, and `srun` and `ckpt-done` (which run on nodes), and it leaves a spec's\n")
	b.WriteString("JSON Schema check to admission, whose rejection `submit` prints.\n\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		fmt.Fprintf(&b, "## %s\n\n", c.CommandPath())
		if long := strings.TrimSpace(c.Long); long != "" {
			b.WriteString(long + "\n\n")
		} else if c.Short != "" {
			b.WriteString(c.Short + "\n\n")
		}
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
		c.LocalFlags().VisitAll(stableDefault)
		if flags := c.LocalFlags().FlagUsagesWrapped(100); strings.TrimSpace(flags) != "" {
			fmt.Fprintf(&b, "Flags:\n\n```\n%s```\n\n", machineFree(flags))
		}
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			walk(sub)
		}
	}
	walk(root)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// stableDefault writes a flag default that is a file found beside the
// repository (the Philly trace, when there) as where it is looked for.
func stableDefault(f *pflag.Flag) {
	if f.Name == "trace" && (f.DefValue == "" || f.DefValue == trace.DefaultPhilly()) {
		f.DefValue = "../shared/traces/philly2017_microsoft.csv.gz beside the repository"
	}
}

// machineFree replaces this machine's working and home directories in
// flag defaults.
func machineFree(s string) string {
	if wd, err := os.Getwd(); err == nil && wd != "/" {
		s = strings.ReplaceAll(s, `"`+wd+`"`, `"$PWD"`)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		s = strings.ReplaceAll(s, `"`+filepath.Clean(home)+"/", `"~/`)
	}
	return s
}
