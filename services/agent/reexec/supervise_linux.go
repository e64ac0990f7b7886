package reexec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/procfs"
)

// The rank supervisor is a small process between the agent and each rank:
// the agent re-executes its own binary (/proc/self/exe) with argv[0] set to
// SupervisorArg0. It makes itself a child subreaper, so every descendant
// of the rank that is orphaned — even one that called setsid — becomes its
// child instead of PID 1's, and it ends the whole tree when the rank exits
// or when its lifeline (a pipe whose write end only the agent holds) reads
// EOF: the agent closed it, or the agent died, even by SIGKILL. A parent
// death signal alone is not enough: it reaches only the direct child, and
// it fires when the forking thread exits, not the process.

// maxRankEnv bounds the environment read from EnvFD; exec refuses far
// less anyway (a quarter of the stack limit, 2 MiB by default).
const maxRankEnv = 16 << 20

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h),
// which package syscall does not name: this package uses syscall, not
// golang.org/x/sys/unix, for its init order (see the package comment).
const prSetChildSubreaper = 36

// superviseMain runs the rank (path, argv) as cred (see CredArg) and
// returns the supervisor's exit code: the rank's own, or 128+signal when a
// signal ended it.
func superviseMain(cred, path string, argv []string) int {
	// Run nothing unless all three descriptors are pipes, as the agent
	// makes them: started by hand, they are closed, or hold what the Go
	// runtime opened in their place (its poller takes the lowest free
	// descriptors), and a rank started without its status or lifeline
	// would run unseen by any agent.
	for _, fd := range []int{LifelineFD, StatusFD, EnvFD} {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			fmt.Fprintln(os.Stderr, "lockstep: rank supervisor started without its pipes")
			return 127
		}
	}
	lifeline := os.NewFile(LifelineFD, "lifeline")
	status := os.NewFile(StatusFD, "status")
	envPipe := os.NewFile(EnvFD, "environment")
	env, err := readRankEnv(envPipe)
	_ = envPipe.Close()
	if err != nil {
		fmt.Fprintf(status, "error: %v\n", oneLine(err.Error()))
		return 127
	}
	// The rank must not inherit either pipe: it would hold the agent's
	// answer open, and see (or keep) the lifeline.
	syscall.CloseOnExec(LifelineFD)
	syscall.CloseOnExec(StatusFD)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(status, "error: become a subreaper: %v\n", errno)
		return 127
	}
	// The agent signals the whole process group (SIGTERM to stop, the
	// checkpoint signal to drain): the rank gets them directly; the
	// supervisor only has to survive them. Notify, not Ignore: an ignored
	// signal would stay ignored in the rank after exec.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for range sigs {
		}
	}()

	credential, err := parseCredArg(cred)
	if err != nil {
		fmt.Fprintf(status, "error: %v\n", oneLine(err.Error()))
		return 127
	}
	// The parent death signal fires when the forking thread ends: this
	// goroutine keeps its thread until the process exits.
	runtime.LockOSThread()
	attr := &os.ProcAttr{Env: env, Files: []*os.File{nil, os.Stdout, os.Stderr},
		// If the supervisor itself is killed, the rank goes with it; its
		// own children are then the agent's (or the next agent's) to end.
		// The kernel keeps the signal across the user change: Go sets it
		// after the credential.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: credential}}
	if credential != nil {
		// Enter the working directory again after the user change, so a
		// directory the owner may not enter fails the start instead of
		// being inherited from the supervisor.
		if wd, err := os.Getwd(); err == nil {
			attr.Dir = wd
		}
	}
	rank, err := startProcess(path, argv, attr)
	if err != nil {
		fmt.Fprintf(status, "error: %v\n", oneLine(err.Error()))
		return 127
	}
	fmt.Fprintf(status, "ok %d\n", rank.Pid)
	_ = status.Close()

	cut := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		close(cut)
	}()
	exited, empty := reapAll(rank.Pid)

	select {
	case ws := <-exited:
		// What the rank left behind, if anything, goes with it. A rank
		// that left nothing (the usual end) needs no scan of the node's
		// processes: the reaper finds no child a moment after reaping the
		// rank, and that moment is waited for first.
		select {
		case <-empty:
		case <-time.After(lingerWait):
			killTree(empty)
		}
		return waitCode(ws)
	case <-cut:
		// The agent is gone or wants the rank dead: with a cgroup, one write
		// ends every process in it; else walk the tree.
		if cg := os.Getenv(EnvRankCgroup); cg != "" {
			killOwnCgroup(cg, empty)
		} else {
			killTree(empty)
		}
		return 137
	}
}

// killCgroup SIGKILLs every process in a cgroup at once. (The agent has
// the same one line: importing it from there would cost this package its
// early init.)
func killCgroup(dir string) error {
	return os.WriteFile(dir+"/cgroup.kill", []byte("1"), 0)
}

// killOwnCgroup ends every process in the rank's cgroup. The supervisor
// first steps out into the agent's own cgroup, so that it survives the
// kill to remove the rank's cgroup (and the agent's parent of it, if this
// was its last rank): an agent killed for good leaves no empty cgroups.
// If it cannot step out, it dies with the rest and a restarted agent
// removes the cgroup.
func killOwnCgroup(cg string, empty chan struct{}) {
	agentCg := parentDir(parentDir(cg))
	if os.WriteFile(agentCg+"/cgroup.procs", []byte(strconv.Itoa(os.Getpid())), 0) != nil {
		_ = killCgroup(cg)
		<-empty
		return
	}
	if killCgroup(cg) != nil {
		killTree(empty)
	}
	<-empty
	_ = os.Remove(cg)
	_ = os.Remove(parentDir(cg))
}

// parentDir is filepath.Dir for the agent's cgroup paths, which are
// absolute and clean (this package does without path/filepath: see the
// package comment).
func parentDir(p string) string {
	i := len(p) - 1
	for i > 0 && p[i] != '/' {
		i--
	}
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// reapAll waits for every child: the rank's status goes to exited, and
// empty closes when no child is left (so no descendant is left either: an
// orphan would have become our child).
func reapAll(rankPID int) (exited chan syscall.WaitStatus, empty chan struct{}) {
	exited, empty = make(chan syscall.WaitStatus, 1), make(chan struct{})
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case err == syscall.EINTR:
			case err != nil:
				close(empty)
				return
			case pid == rankPID:
				exited <- ws
			}
		}
	}()
	return exited, empty
}

// killTree SIGKILLs every descendant until none is left. A descendant
// forked between a scan and the kills is found by the next scan. A scan
// reads every process's stat file on the node: a few milliseconds of CPU
// on a busy node.
func killTree(empty chan struct{}) {
	for {
		for _, pid := range procfs.Descendants(os.Getpid()) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-empty:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lingerWait is how long a supervisor whose rank exited lets the reaper
// see that no child is left before it scans for descendants to kill.
const lingerWait = 20 * time.Millisecond

func waitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// The rank's environment arrives on EnvFD, not in the supervisor's own:
// the supervisor runs as the agent (root on a real node), and variables
// the user chose would steer it (see the agent's supervisorEnv).

// EncodeRankEnv is what the agent writes on EnvFD: the rank's
// environment, NUL-separated.
func EncodeRankEnv(env []string) []byte {
	var b []byte
	for _, kv := range env {
		b = append(b, kv...)
		b = append(b, 0)
	}
	return b
}

// readRankEnv reads the rank's environment from EnvFD, to its end.
func readRankEnv(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRankEnv+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read the rank's environment: %w", err)
	case len(data) > maxRankEnv:
		return nil, fmt.Errorf("the rank's environment is over %d bytes", maxRankEnv)
	case len(data) > 0 && data[len(data)-1] != 0:
		return nil, errors.New("the rank's environment ends mid-variable")
	}
	var env []string
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return env, nil
}

func oneLine(s string) string { return string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte(" "))) }

// ReadStatus reads the supervisor's one-line answer: the rank's PID, or
// why it did not start.
func ReadStatus(r io.Reader) (pid int, err error) {
	line, rerr := readLine(r)
	if msg, ok := bytes.CutPrefix(line, []byte("error: ")); ok {
		return 0, errors.New(string(msg))
	}
	if _, err := fmt.Sscanf(string(line), "ok %d", &pid); err != nil {
		if rerr != nil {
			return 0, fmt.Errorf("rank supervisor gave no answer: %w", rerr)
		}
		return 0, fmt.Errorf("rank supervisor answered %q", line)
	}
	return pid, nil
}

// maxStatusLine bounds the supervisor's answer (an error message).
const maxStatusLine = 64 << 10

// readLine reads one line, without its newline and surrounding spaces,
// a byte at a time: nothing after it is the caller's to lose.
func readLine(r io.Reader) ([]byte, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < maxStatusLine {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if err != nil {
			return bytes.TrimSpace(line), err
		}
	}
	return bytes.TrimSpace(line), nil
}

// CredArg encodes a credential for the rank supervisor's command line
// ("-": run the rank as the supervisor itself). The supervisor stays the
// agent's user, so that it can end the tree and its cgroup whatever the
// rank does; only the rank it starts changes user.
func CredArg(c *syscall.Credential) string {
	if c == nil {
		return "-"
	}
	b := fmt.Appendf(nil, "%d:%d:", c.Uid, c.Gid)
	for i, g := range c.Groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(g), 10)
	}
	return string(b)
}

// parseCredArg is CredArg's inverse.
func parseCredArg(s string) (*syscall.Credential, error) {
	if s == "-" {
		return nil, nil
	}
	f := bytes.Split([]byte(s), []byte(":"))
	if len(f) != 3 {
		return nil, fmt.Errorf("credential %q: want uid:gid:groups", s)
	}
	uid, err1 := strconv.ParseUint(string(f[0]), 10, 32)
	gid, err2 := strconv.ParseUint(string(f[1]), 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("credential %q: %w", s, err)
	}
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	if len(f[2]) > 0 {
		for _, g := range bytes.Split(f[2], []byte(",")) {
			n, err := strconv.ParseUint(string(g), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("credential %q: %w", s, err)
			}
			c.Groups = append(c.Groups, uint32(n))
		}
	}
	return c, nil
}
