package agent

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
)

// startEngine connects to the container engine and removes what an
// earlier agent of this node left: at start this agent runs no attempt,
// so every container labelled with this node is a leftover.
func startEngine(ctx context.Context, cfg Config, log *slog.Logger) (*containers.Docker, error) {
	d, err := containers.NewDocker(cfg.ContainerHost, containers.WithSharing(containers.Sharing{Container: cfg.ContainerShare, DataDir: cfg.DataDir}))
	if err != nil {
		return nil, errors.Wrap(err, "--container-runtime docker")
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.Ping(pctx); err != nil {
		_ = d.Close()
		return nil, errors.Wrap(err, "--container-runtime docker (--container-host)")
	}
	n, err := containers.Reap(pctx, d, cfg.Node.Name, cfg.DataDir, func(string, int) bool { return false })
	if err != nil {
		log.Warn("leftover rank containers not all removed", "err", err)
	}
	if n > 0 {
		log.Info("removed rank containers an earlier agent left", "count", n)
	}
	return d, nil
}

// ctrRank is a rank running in a container, behind the same small
// interface as a process (rank).
type ctrRank struct {
	d      *containers.Docker
	id     string
	ctx    context.Context
	outs   []io.Writer
	copied <-chan struct{}
	exited chan struct{}
}

// engineCallTimeout bounds one engine call that should be quick (a
// signal, a removal): a hung engine must not hang the executor.
const engineCallTimeout = 30 * time.Second

func (c *ctrRank) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		c.kill()
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, engineCallTimeout)
	defer cancel()
	_ = c.d.Signal(ctx, c.id, unix.SignalName(sig))
}

func (c *ctrRank) ended() bool { return isClosed(c.exited) }

func (c *ctrRank) kill() {
	if isClosed(c.exited) {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, engineCallTimeout)
	defer cancel()
	_ = c.d.Signal(ctx, c.id, "SIGKILL")
}

// finish waits for the container, closes its output and removes it.
func (c *ctrRank) finish() int {
	code, err := c.d.Wait(c.ctx, c.id)
	close(c.exited)
	if err != nil && code == 0 {
		code = 255
	}
	// The attach stream ends with the container: its last lines are
	// written before the sinks close (bounded: a stuck stream must not
	// hold the exit report).
	select {
	case <-c.copied:
	case <-time.After(5 * time.Second):
	}
	closeAll(c.outs)
	// A container not removed now is reaped at the agent's next start.
	ctx, cancel := context.WithTimeout(c.ctx, engineCallTimeout)
	defer cancel()
	_ = c.d.Remove(ctx, c.id)
	return code
}

// noEngine is why a node without a container engine runs no container
// job (its pull fails with it, and so would its ranks).
func (e *executor) noEngine() error {
	return errors.Newf("node %s runs no container jobs: its agent was started without --container-runtime docker", e.cfg.Node.Name)
}

// lastWins keeps one entry per name, the last, as os/exec does: an engine
// need not (Lockstep's own variables come last and must be the ones seen).
func lastWins(env []string) []string {
	at := map[string]int{}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// containerUser is uid:gid of whom the ranks run as in the container:
// the account a bare rank would run as (the owner's, or the agent's own
// when it runs ranks as itself). container.user may only name that
// account: a container is never a way to become somebody else, root
// included.
func containerUser(asked string, acct, self account) (string, error) {
	uid, gid := unix.Getuid(), unix.Getgid()
	if acct.Cred != nil {
		uid, gid = int(acct.Cred.Uid), int(acct.Cred.Gid)
	}
	ids := strconv.Itoa(uid) + ":" + strconv.Itoa(gid)
	name := acct.Name
	if acct.Cred == nil {
		name = self.Name
	}
	switch asked {
	case "", name, strconv.Itoa(uid), ids:
		return ids, nil
	}
	return "", errors.Newf("container.user %q is not the job's account %s (%s); containers run as the job's owner", asked, name, ids)
}

// onlineCPUs is those of cpus this process may run on (a simulated node
// may claim more than the machine has).
func onlineCPUs(cpus []int) []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for _, c := range cpus {
		if c < 1024 && set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

func closeAll(ws []io.Writer) {
	for _, w := range ws {
		if c, ok := w.(io.Closer); ok {
			_ = c.Close()
		}
	}
}
