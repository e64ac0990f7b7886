package reexec

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// A rank container's lifeline: a bare rank dies with its agent (its
// supervisor's lifeline pipe reads EOF, even when the agent is SIGKILLed),
// and a rank container must too, or a node whose agent died runs ranks
// beside their replacements elsewhere once the node lease expires. The
// agent's own static binary is mounted into the container and started as
// its command, with argv[0] LifelineArg0: it connects to the agent's
// lifeline socket, starts the rank, forwards the signals the engine's
// init passes on (stop, checkpoint) to the rank's process group, and when
// the connection ends — the agent exited, however — kills the rank and
// exits, which ends the container.

// LifelineArgv is the container command that runs argv on a lifeline to
// the agent's socket sock (mounted at the same path), the agent's binary
// being mounted at bin.
func LifelineArgv(bin, sock string, argv []string) []string {
	return append([]string{bin, sock, "--"}, argv...)
}

// lifelineMain runs argv until it exits (its exit code, 128+n for signal
// n) or the agent's end cuts the lifeline (137).
func lifelineMain(sock string, argv []string) int {
	conn, err := dialUnix(sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockstep: no lifeline to the node's agent (%v): the rank is not started\n", err)
		return 127
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	bin, err := lookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockstep: %v\n", err)
		return 127
	}
	rank, err := startProcess(bin, argv, &os.ProcAttr{Files: []*os.File{nil, os.Stdout, os.Stderr},
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockstep: %v\n", err)
		return 127
	}
	pgid := rank.Pid
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
	state, err := rank.Wait()
	if err != nil {
		return 127
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

// dialUnix connects to the unix socket at path. It is net.Dial("unix")
// without package net, whose initialisation would hold this package's
// init back (see the package comment). The connect blocks while the
// listen backlog is full, where net.Dial would fail: the agent accepts
// without pause, and a lifeline that waits is better than a rank refused.
func dialUnix(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
