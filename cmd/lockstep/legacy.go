package main

import (
	"context"
	"flag"
	"fmt"
)

// The verbs below still parse their own flags with the flag package; they
// move to cobra one group at a time.

// legacyCommand is a verb that parses its own flags.
type legacyCommand struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

var legacyCommands = map[string]legacyCommand{
	"trace":       {"print a job's trace as a waterfall (spans `lockstep dev` recorded)", runTrace},
	"healthcheck": {"exit 0 if NATS, etcd or an HTTP endpoint answers (container health checks)", runHealthcheck},
	"loadtest":    {"load-test the real services with thousands of simulated nodes (see docs/loadtest.md)", runLoadtest},
	"simulate":    {"replay a job trace through the scheduling policy and baselines in virtual time", runSimulate},
}

// newFlags makes a flag set that prints a helpful usage and reports errors
// instead of exiting.
func newFlags(env *cliEnv, name, args, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: lockstep %s %s\n\n%s\n\nFlags:\n", name, args, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses flags that may come after positional arguments
// (`lockstep logs ID -f`), returning the positionals.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func outputFlag(fs *flag.FlagSet) *string {
	return fs.String("o", "table", "output format: table or json")
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usagef("-o: %q is not one of table, json", o)
	}
	return nil
}
