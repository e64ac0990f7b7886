package main

import (
	"flag"
	"fmt"

	"github.com/lockstep-dev/lockstep/shared/config"
)

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

// natsFlag adds --nats for client commands.
func natsFlag(fs *flag.FlagSet) *string {
	return fs.String("nats", config.DefaultNATS, "NATS URL of the Lockstep cluster")
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
