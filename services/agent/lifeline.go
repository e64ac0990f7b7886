package agent

import (
	"context"
	"debug/elf"
	"io"
	"net"

	"github.com/cockroachdb/errors"
)

// lifelineSockName is the agent's lifeline socket in its data directory:
// each rank container's lifeline (reexec.LifelineArgv) holds a
// connection to it until the agent's process ends.
const lifelineSockName = "lifeline.sock"

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
