// Command lockstep is Lockstep's one binary: the user CLI (submit, queue,
// describe, logs, cancel), each service as its own process (admission,
// placement, gang, agent, drain), and `lockstep dev`, the whole system in
// one process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries the process's streams, so commands are testable.
type cliEnv struct {
	stdout, stderr io.Writer
	stdin          io.Reader
}

var commands = map[string]command{
	"dev":        {"run the whole system in one process (embedded NATS and etcd, simulated nodes)", runDev},
	"submit":     {"submit a job spec (JSON or YAML file, - for stdin)", runSubmit},
	"queue":      {"list jobs, like squeue", runQueue},
	"describe":   {"show a job: spec, placement per rank, event timeline", runDescribe},
	"trace":      {"print a job's trace as a waterfall (spans `lockstep dev` recorded)", runTrace},
	"logs":       {"print a job's rank output", runLogs},
	"cancel":     {"cancel a job", runCancel},
	"check":      {"verify the scheduler's safety invariants (exit 1 on violation)", runCheck},
	"checkpoint": {"checkpoint a running job and requeue it", runCheckpoint},
	"ckpt-done":  {"acknowledge a checkpoint (run by a training rank)", runCkptDone},
	"node":       {"node drain|resume|list", runNode},
	"topology":   {"print the switch tree with free/total GPUs per switch", runTopology},
	"stats":      {"cluster totals: jobs by state, cluster η, mean gang wait", runStats},
	"admission":  {"run the admission service", runAdmission},
	"placement":  {"run the placement service", runPlacement},
	"gang":       {"run the gang reservation service", runGang},
	"agent":      {"run a node agent", runAgent},
	"drain":      {"run the drain service", runDrain},
	"version":    {"print the version", runVersion},
	"auth":       {"make credentials: init an authority, issue identities, enroll nodes", runAuth},

	"healthcheck": {"exit 0 if NATS, etcd or an HTTP endpoint answers (container health checks)", runHealthcheck},
	"loadtest":    {"load-test the real services with thousands of simulated nodes (see docs/loadtest.md)", runLoadtest},
	"simulate":    {"replay a job trace through the scheduling policy and baselines in virtual time", runSimulate},
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC(os.Getenv)
	os.Exit(run(ctx, &cliEnv{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin}, os.Args[1:]))
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "lockstep: unknown command %q\n\n", args[0])
		usage(env.stderr)
		return 2
	}
	if err := cmd.run(ctx, env, args[1:]); err != nil {
		return report(env.stderr, err)
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Lockstep: a gang scheduler for distributed training.")
	fmt.Fprintln(w, "\nUsage: lockstep COMMAND [flags]   (lockstep COMMAND -h for its flags)\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nStart with `lockstep dev`, then `lockstep submit docs/examples/hello.json --wait`.")
}

func runVersion(_ context.Context, env *cliEnv, _ []string) error {
	fmt.Fprintln(env.stdout, "lockstep", version)
	return nil
}
