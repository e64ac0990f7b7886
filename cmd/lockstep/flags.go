package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/lockstep-dev/lockstep/shared/contract/client"

	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
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

// natsFlag adds the connection flags of client commands (--nats, --creds,
// --tls-*, --context); dial resolves them against the environment and the
// config file.
func natsFlag(fs *flag.FlagSet) *config.ConnFlags {
	return config.RegisterConnection(fs, false)
}

// dial connects a client command to the cluster its flags, environment and
// config file name, with the credentials they give.
func dial(ctx context.Context, f *config.ConnFlags) (*client.Client, error) {
	conn, err := f.Resolve(os.Getenv)
	if err != nil {
		return nil, err
	}
	return client.Dial(ctx, conn.NATS, conn.BusOptions()...)
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
