// Command lockstep is Lockstep's one binary: the user CLI (submit, queue,
// describe, logs, cancel), each service as its own process (admission,
// placement, gang, agent, drain), and `lockstep dev`, the whole system in
// one process. Built with -tags lockstep_client it is the CLI alone
// (client_build.go), which starts in a quarter of the time.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cockroachdb/errors"
)

// cliEnv carries the process's streams, so commands are testable.
type cliEnv struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	// stdinTerminal makes stdin count as a terminal (tests of prompts).
	stdinTerminal bool
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC(os.Getenv)
	// Run as squeue (a slurm-shims link), the binary is `lockstep squeue`.
	os.Exit(run(ctx, &cliEnv{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin}, shimArgs(os.Args[0], os.Args[1:])))
}

// run parses and runs a command line and returns the exit code: 0, 2 for
// a command line that does not parse (with a hint at the usage), or what
// the command's error says (report).
func run(ctx context.Context, env *cliEnv, args []string) int {
	a := newApp(env)
	defer a.close()
	root := newRoot(a)
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if isUsage(err) {
		err = errors.WithHint(err, usageHint(cmd))
	}
	return report(env.stderr, err)
}
