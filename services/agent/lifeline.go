package agent

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/cockroachdb/errors"
)

// A rank container's lifeline: a bare rank dies with its agent (its
// supervisor's lifeline pipe reads EOF, even when the agent is SIGKILLed),
// and a rank container must too, or a node whose agent died runs ranks
// beside their replacements elsewhere once the node lease expires. The
// agent's own static binary is mounted into the container and started as
// its command, with argv[0] lifelineArg0: it connects to the agent's
// lifeline socket, starts the rank, forwards the signals the engine's
// init passes on (stop, checkpoint) to the rank's process group, and when
// the connection ends — the agent exited, however — kills the rank and
// exits, which ends the container.
//
// As the rank supervisor's, the hook is a package init, so that whichever
// binary the agent is linked into serves it; it acts only on that exact
// program name.

const (
	lifelineArg0     = "lockstep-lifeline"
	lifelineSockName = "lifeline.sock"
)

func init() {
	if len(os.Args) > 3 && filepath.Base(os.Args[0]) == lifelineArg0 && os.Args[2] == "--" {
		os.Exit(lifelineMain(os.Args[1], os.Args[3:]))
	}
}

// lifelineArgv is the container command that runs argv on a lifeline to
// the agent's socket sock (mounted at the same path), the agent's binary
// being mounted at bin.
func lifelineArgv(bin, sock string, argv []string) []string {
	return append([]string{bin, sock, "--"}, argv...)
}

// lifelineMain runs argv until it exits (its exit code, 128+n for signal
// n) or the agent's end cuts the lifeline (137).
func lifelineMain(sock string, argv []string) int {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockstep: no lifeline to the node's agent (%v): the rank is not started\n", err)
		return 127
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	rank := exec.Command(argv[0], argv[1:]...)
	rank.Stdin, rank.Stdout, rank.Stderr = nil, os.Stdout, os.Stderr
	rank.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := rank.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "lockstep: %v\n", err)
		return 127
	}
	pgid := rank.Process.Pid
	go func() {
		for s := range sigs {
			_ = syscall.Kill(-pgid, s.(syscall.Signal))
		}
	}()
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		// The agent is gone: nothing may run that it cannot stop.
		fmt.Fprintln(os.Stderr, "lockstep: the node's agent is gone; the rank is killed")
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
	err = rank.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 127
	}
	return 0
}

// openLifelines serves the lifeline socket, when the agent has a static
// binary to mount into containers (the Slurm shims' target).
func (e *executor) openLifelines(ctx context.Context) error {
	bin := e.shimBinary()
	switch {
	case e.cfg.ContainerShare != "":
		return errors.New("the agent runs in a container: its binary is not on the host for the engine to mount")
	case bin == "":
		return errors.New("no agent binary to mount (the Slurm shims' target)")
	case !staticBinary(bin):
		return errors.Newf("%s is not a static binary (build it with CGO_ENABLED=0)", bin)
	}
	l, path, err := listenLifelines(e.cfg.DataDir)
	if err != nil {
		return err
	}
	go serveLifelines(ctx, l)
	e.lifeline, e.lifelineBin = path, bin
	return nil
}

// listenLifelines opens the lifeline socket in the data directory, open
// to all: rank containers run as their owners, and a connection gives
// nothing but a wait for the agent's end.
func listenLifelines(dataDir string) (net.Listener, string, error) {
	return listenOpen(dataDir, lifelineSockName, "rank containers")
}

// serveLifelines accepts lifelines until ctx ends and holds each open
// until the agent's process exits: the kernel closes them then, SIGKILL
// included. (A closed listener ends no connection already accepted.)
func serveLifelines(ctx context.Context, l net.Listener) {
	_ = acceptUntil(ctx, l, 0, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// staticBinary reports whether the ELF executable at path needs no
// program interpreter: only such a binary runs in any image (FROM
// scratch has no C library). `go build` makes one with CGO_ENABLED=0.
func staticBinary(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}
