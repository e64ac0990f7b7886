package agent

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/services/agent/reexec"
)

// rankProc is one running rank as the agent holds it: its supervisor
// (the leader of the rank's process group), the lifeline only the agent
// can close, and the rank's record (token, cgroup).
type rankProc struct {
	c        *container
	cmd      *exec.Cmd // the supervisor
	rec      rankRecord
	lifeline *os.File
	cutOnce  sync.Once
	exited   chan struct{}
}

// supervisorStartTimeout bounds the wait for a supervisor's answer.
const supervisorStartTimeout = 30 * time.Second

// killFallback is how long a supervisor gets to end the tree after its
// lifeline is cut before the agent kills its process group itself (it may
// have been stopped with SIGSTOP).
const killFallback = 3 * time.Second

// start runs rank (Path, Args, Dir, Env, Stdout, Stderr set, and
// SysProcAttr.Credential to run it as another user) under a supervisor
// pinned as pin says (its cgroup's cpuset too, where it has one). Like
// exec.Cmd.Start, an error means nothing of the rank runs.
func (c *container) start(rank *exec.Cmd, pin rankPin) (p *rankProc, pinErr, err error) {
	if rank.Err != nil {
		return nil, nil, rank.Err
	}
	rec, err := c.prepare(pin)
	if err != nil {
		return nil, nil, err
	}
	p = &rankProc{c: c, rec: rec, exited: make(chan struct{})}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		c.release(rec, false)
		return nil, nil, errors.Wrap(err, "lifeline pipe")
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		_, _ = lifeR.Close(), lifeW.Close()
		c.release(rec, false)
		return nil, nil, errors.Wrap(err, "status pipe")
	}
	envR, envW, err := os.Pipe()
	if err != nil {
		_, _, _, _ = lifeR.Close(), lifeW.Close(), statR.Close(), statW.Close()
		c.release(rec, false)
		return nil, nil, errors.Wrap(err, "environment pipe")
	}
	defer func() { _, _, _, _, _ = lifeR.Close(), statW.Close(), statR.Close(), envR.Close(), envW.Close() }()
	sup := &exec.Cmd{
		Path:   "/proc/self/exe", // this binary, even if replaced on disk since
		Args:   append([]string{reexec.SupervisorArg0, reexec.CredArg(rankCred(rank)), rank.Path}, rank.Args...),
		Dir:    rank.Dir,
		Env:    supervisorEnv(rec.Token, rec.Cgroup),
		Stdout: rank.Stdout, Stderr: rank.Stderr,
		ExtraFiles: []*os.File{lifeR, statW, envR}, // reexec.LifelineFD, StatusFD, EnvFD
		// The supervisor leads the rank's process group: a group signal
		// reaches it (it ignores it) and the rank with its children.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		// Output pipes may outlive the tree only briefly (a leaked fd in a
		// process outside it): do not wait for them past this.
		WaitDelay: 2 * time.Second,
	}
	if rec.Cgroup != "" {
		fd, err := unix.Open(rec.Cgroup, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			_ = lifeW.Close()
			c.release(rec, false)
			return nil, nil, errors.Wrap(err, "open the rank's cgroup")
		}
		defer unix.Close(fd)
		// Born in its cgroup (clone3 CLONE_INTO_CGROUP): no fork escapes.
		sup.SysProcAttr.UseCgroupFD, sup.SysProcAttr.CgroupFD = true, fd
	}
	p.cmd, p.lifeline = sup, lifeW
	pinErr, err = startPinned(sup, pin)
	if err != nil {
		_ = lifeW.Close()
		c.release(rec, false)
		return nil, nil, errors.Wrap(err, "start rank supervisor")
	}
	_, _ = statW.Close(), envR.Close() // the supervisor holds its own copies
	// The rank's environment, the token included, for the rank alone. A
	// supervisor that ended before reading it closed the pipe: the write
	// fails, and the status read below says why.
	_ = envW.SetWriteDeadline(time.Now().Add(supervisorStartTimeout)) // a supervisor that neither reads nor exits
	_, werr := envW.Write(reexec.EncodeRankEnv(append(rank.Env[:len(rank.Env):len(rank.Env)], envRankToken+"="+rec.Token)))
	_ = envW.Close()
	if werr != nil {
		werr = errors.Wrap(werr, "hand the rank its environment")
	}
	_ = statR.SetReadDeadline(time.Now().Add(supervisorStartTimeout))
	if _, err := reexec.ReadStatus(statR); err != nil || werr != nil {
		p.kill()
		_ = p.wait()
		return nil, nil, errors.CombineErrors(err, werr)
	}
	return p, pinErr, nil
}

// rankCred is the credential the rank is to run with (nil: as the
// supervisor, that is the agent). The supervisor itself never takes it.
func rankCred(rank *exec.Cmd) *syscall.Credential {
	if rank.SysProcAttr == nil {
		return nil
	}
	return rank.SysProcAttr.Credential
}

// pid is the supervisor's PID, which is also the process group's ID.
func (p *rankProc) pid() int { return p.cmd.Process.Pid }

// signal sends sig to the rank's process group; SIGKILL ends the whole
// tree instead, setsid'd descendants included.
func (p *rankProc) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		p.kill()
		return
	}
	if isClosed(p.exited) {
		// Reaped: its PID, the group's ID, may be someone else's now (a
		// job whose first rank ended, then drained, would signal them).
		return
	}
	_ = syscall.Kill(-p.pid(), sig)
}

// kill ends the rank's whole tree now.
func (p *rankProc) kill() {
	if p.rec.Cgroup != "" {
		_ = killCgroup(p.rec.Cgroup)
	}
	p.cut()
	time.AfterFunc(killFallback, func() {
		if !isClosed(p.exited) {
			_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		}
	})
}

// cut closes the lifeline: the supervisor ends the tree and exits.
func (p *rankProc) cut() { p.cutOnce.Do(func() { _ = p.lifeline.Close() }) }

// wait waits for the supervisor, then makes sure nothing of the tree is
// left and forgets the rank. It returns exec.Cmd.Wait's error.
func (p *rankProc) wait() error {
	err := p.cmd.Wait()
	close(p.exited)
	p.cut()
	// A supervisor that exited by itself ended the tree; one killed by a
	// signal (the OOM killer, a rank's `kill -9 $PPID`) did not, and
	// without a cgroup its tree must be searched for.
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	p.c.release(p.rec, ws.Signaled() && p.rec.Cgroup == "")
	return err
}
