package agent

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// A batch job (spec.batch, as sbatch submits one) is one gang, but only
// its node rank 0 runs a process of its own: the script, once, with the
// node's whole share of the allocation. The other nodes start nothing and
// hold their share until the job ends; the script's srun steps run tasks
// on them (steps*.go). The job ends when the script does, with its exit
// code (gang: domain.Allocation.AllExited).

// scriptName is the script's file in the attempt's directory.
const scriptName = "batch-script"

// startBatch starts the script on node rank 0 and nothing elsewhere. A
// container batch job's script runs in the image, and so do its steps'
// tasks on every node (g.img).
func (e *executor) startBatch(g *localGang, setup rankSetup, workdir, dir, note string) error {
	as, acct := g.as, g.acct
	if as.Container != nil {
		img, err := e.prepareContainers(g, dir)
		if err != nil {
			return err
		}
		g.img = &img
		setup = g.setup
	}
	if as.NodeRank != 0 {
		return nil
	}
	path := filepath.Join(dir, scriptName)
	if err := writeScript(path, as.Batch.Script, acct); err != nil {
		return err
	}
	// exec honours the script's "#!"; without one, Slurm runs it with
	// /bin/sh, and so does this.
	argv := append([]string{path}, as.Command[1:]...)
	if !strings.HasPrefix(as.Batch.Script, "#!") {
		argv = append([]string{"/bin/sh"}, argv...)
	}
	whole := wholeNode(as.Ranks)
	env := rankEnvOf(setup, whole)
	env.Task = rankenv.SlurmTask{} // the batch script: task 0 of node 0, no step
	out, errOut, err := openBatchOutput(as, acct, e.cfg.Node.Name, workdir)
	if err != nil {
		return err
	}
	// The script's output goes to its files and, as a rank's does, to the
	// job's log stream and the attempt's rank log.
	logFile := filepath.Join(dir, "rank-0.log")
	outSink, errSink := e.newSinks(as, 0, logFile)
	stdout, stderr := teeTo(out, outSink), teeTo(errOut, errSink)
	if note != "" {
		_, _ = io.WriteString(stderr, note)
	}
	if g.img != nil {
		// The script is in the attempt's directory, mounted at its own path.
		c, err := e.startContainer(g, *g.img, ctrTask{name: "batch", share: whole, argv: argv, env: env, stdout: stdout, stderr: stderr})
		if err != nil {
			closeAll([]io.Writer{stdout, stderr})
			return errors.Wrapf(err, "start the batch script of job %s in image %s", as.JobID, g.img.spec.Image)
		}
		g.procs = append(g.procs, c)
		return nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = workdir
	cmd.Env = env.List()
	if acct.Cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.Cred}
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var pin rankPin
	pin.cpus, pin.mems = place.Pin(e.cfg.Node, whole, as.GPUBind == "closest")
	p, pinErr, err := e.box.start(cmd, pin)
	if err != nil {
		closeAll([]io.Writer{stdout, stderr})
		return errors.Wrapf(err, "start the batch script of job %s", as.JobID)
	}
	g.procs = append(g.procs, p)
	if pinErr != nil {
		e.log.Warn("batch script not pinned", "job", as.JobID, "err", pinErr)
	}
	return nil
}

// hold is a held node's share of a batch job: nothing runs but the
// script's steps; it ends when the assignment goes (the job ended) and
// reports nothing — the script's node reports the job's end.
func (e *executor) hold(g *localGang) {
	<-g.stopping
	e.endSteps(g)
	g.ackMu.Lock()
	close(g.exited)
	g.ackMu.Unlock()
	e.retire(g)
	g.span.End()
	e.log.InfoContext(g.ctx, "batch share released", "job", g.as.JobID, "attempt", g.as.Attempt)
}

// wholeNode is the node's whole share as one rank: the script's, or a
// step task's that spans several ranks' GPUs and cores.
func wholeNode(ranks []domain.Rank) domain.Rank {
	w := domain.Rank{Rank: ranks[0].Rank}
	for _, r := range ranks {
		w.GPUs = append(w.GPUs, r.GPUs...)
		w.CPUs = append(w.CPUs, r.CPUs...)
	}
	return w
}

// writeScript writes the script, 0700, owned by the job's account.
func writeScript(path, script string, acct account) error {
	_ = os.Remove(path) // a requeued attempt's, or a link someone left
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		return errors.Wrap(err, "write the batch script")
	}
	_, err = f.WriteString(script)
	if err == nil && acct.Cred != nil {
		err = f.Chown(int(acct.Cred.Uid), int(acct.Cred.Gid))
	}
	return errors.Wrap(errors.CombineErrors(err, f.Close()), "write the batch script")
}

// openBatchOutput opens the script's output and error files (Slurm
// patterns, relative to workdir), truncated as Slurm's default open mode
// does, as the job's account: a user cannot have the agent write where
// they may not.
func openBatchOutput(as domain.Assignment, acct account, node, workdir string) (out, errOut *os.File, err error) {
	vars := slurmenv.PatternVars{JobID: as.JobID, JobName: as.JobName, User: acct.Name, Node: node,
		RestartCount: as.RestartCount, WorkDir: workdir}
	if vars.JobName == "" {
		vars.JobName = as.JobID
	}
	outPattern := as.Batch.Output
	if outPattern == "" {
		outPattern = jobspec.DefaultBatchOutput
	}
	// An array task's %A and %a are its array's ID and its index, and its
	// default file is Slurm's slurm-%A_%a.out. The values come from the
	// assignment (etcd's record of the task), as everything else here.
	if as.Array != nil {
		vars.ArrayJobID, vars.ArrayTaskID = as.Array.JobID, as.Array.Index
		if as.Batch.Output == "" {
			outPattern = jobspec.DefaultArrayBatchOutput
		}
	}
	outPath := slurmenv.ExpandPattern(outPattern, vars)
	errPath := outPath
	if as.Batch.Error != "" {
		errPath = slurmenv.ExpandPattern(as.Batch.Error, vars)
	}
	if out, err = openAs(outPath, acct); err != nil {
		return nil, nil, errors.Wrapf(err, "batch.output")
	}
	if errPath == outPath {
		return out, out, nil
	}
	if errOut, err = openAs(errPath, acct); err != nil {
		_ = out.Close()
		return nil, nil, errors.Wrapf(err, "batch.error")
	}
	return out, errOut, nil
}

// openAs opens path for writing with the file system permissions of acct:
// its uid, gid and supplementary groups. On Linux these are per thread at
// the system call (fsuid and fsgid; the groups through the raw call, where
// Go's own Setgroups changes every thread), so the switch is made on a
// thread of its own that is never handed back to the runtime. Without the
// groups, the agent's own (root's disk or adm, when started from a root
// shell) would let batch.output name a raw disk or a group-writable file.
// A FIFO does not block the open (the agent would wait for a reader for
// ever); the descriptor is made blocking again once open.
func openAs(path string, acct account) (*os.File, error) {
	open := func() (*os.File, error) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|unix.O_NONBLOCK, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
			_ = f.Close()
			return nil, err
		}
		return f, nil
	}
	if acct.Cred == nil {
		return open()
	}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Locked and never unlocked: the thread exits with the goroutine,
		// whatever ids it was left with.
		runtime.LockOSThread()
		if err := setThreadGroups(acct.Cred.Groups); err != nil {
			ch <- result{nil, errors.Wrap(err, "take the owner's groups")}
			return
		}
		unix.Setfsgid(int(acct.Cred.Gid))
		unix.Setfsuid(int(acct.Cred.Uid))
		f, err := open()
		ch <- result{f, err}
	}()
	r := <-ch
	return r.f, r.err
}

// tee writes to a file and a log sink, and closes both.
type tee struct {
	io.Writer
	f    *os.File
	sink *logSink
}

func teeTo(f *os.File, sink *logSink) *tee {
	return &tee{Writer: io.MultiWriter(f, sink), f: f, sink: sink}
}

// Close closes both (the file may be shared by stdout and stderr: a
// second close is harmless).
func (t *tee) Close() error {
	_ = t.f.Close()
	return t.sink.Close()
}

// setThreadGroups sets the calling thread's supplementary groups (none
// for an empty list), and only that thread's: the raw system call, not
// Go's Setgroups, which changes every thread of the process.
func setThreadGroups(groups []uint32) error {
	var p unsafe.Pointer
	if len(groups) > 0 {
		p = unsafe.Pointer(&groups[0])
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(p), 0); errno != 0 {
		return errno
	}
	return nil
}
