// Package reexec is the agent's own binary run as something else: the
// supervisor between the agent and each rank, and a rank container's
// lifeline. The agent starts them by executing its binary again with one
// of two exact program names (argv[0]), and this package's init takes
// over the process when it sees one.
//
// The hooks are a package init rather than a subcommand of cmd/lockstep
// because the agent runs inside other binaries too (`lockstep dev`, every
// test binary that starts an agent): whichever binary links the agent can
// supervise its ranks.
//
// They are a package of their own, importing nothing but a few packages
// of the standard library (and procfs, which imports the same), for what
// a process start costs. Go initialises packages in dependency order and,
// of those ready, the first by import path (the spec's rule since Go
// 1.21), so this init runs, and exits into the supervisor, as soon as its
// imports are initialised and no package whose path sorts before this
// one's is ready. Packages that nearly everything imports early (os,
// syscall, time, fmt, strconv, bytes, os/signal) are initialised after
// some 40 packages; strings and bufio are not, and either holds this init
// back behind some 95, path/filepath and os/exec behind some 200: etcd's
// server, the protobuf descriptors, the JSON Schema compiler (five
// meta-schemas compiled at init), Prometheus, cockroachdb/errors. So
// processes are started with os.StartProcess and paths cut by hand
// (start.go). A
// supervisor behind all the inits cost 42 ms of CPU and 7.3 MB of its own
// memory, behind 200 of them 15 ms (its rank's included) and 2.1 MB
// (docs/benchmarks.md). TestSupervisorSkipsTheServersInits (cmd/lockstep)
// keeps it so: an import added here that pulls in a large package, or one
// of those four, puts those costs back on every rank.
package reexec

import "os"

const (
	// SupervisorArg0 is the program name of a rank supervisor: argv is
	// SupervisorArg0, CredArg(credential), the rank's path and argv.
	SupervisorArg0 = "lockstep-rank-supervisor"
	// LifelineArg0 is the file name of the agent's binary as mounted
	// into a rank container, which runs it as the lifeline (LifelineArgv).
	LifelineArg0 = "lockstep-lifeline"

	// LifelineFD, StatusFD and EnvFD are the supervisor's ExtraFiles (3,
	// 4 and 5): the lifeline's read end, the status pipe's write end and
	// the environment pipe's read end (EncodeRankEnv).
	LifelineFD = 3
	StatusFD   = 4
	EnvFD      = 5

	// EnvRankCgroup names the rank's cgroup directory in the supervisor's
	// environment, if it has one.
	EnvRankCgroup = "LOCKSTEP_RANK_CGROUP"
)

func init() {
	switch {
	case len(os.Args) > 2 && os.Args[0] == SupervisorArg0:
		os.Exit(superviseMain(os.Args[1], os.Args[2], os.Args[3:]))
	case len(os.Args) > 3 && baseName(os.Args[0]) == LifelineArg0 && os.Args[2] == "--":
		os.Exit(lifelineMain(os.Args[1], os.Args[3:]))
	}
}

// baseName is filepath.Base for a program name (see start.go for why not
// path/filepath).
func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
