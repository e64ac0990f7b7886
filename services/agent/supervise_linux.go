package agent

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
)

// The rank supervisor is a small process between the agent and each rank:
// the agent re-executes its own binary (/proc/self/exe) with argv[0] set to
// supervisorArg0. It makes itself a child subreaper, so every descendant
// of the rank that is orphaned — even one that called setsid — becomes its
// child instead of PID 1's, and it ends the whole tree when the rank exits
// or when its lifeline (a pipe whose write end only the agent holds) reads
// EOF: the agent closed it, or the agent died, even by SIGKILL. A parent
// death signal alone is not enough: it reaches only the direct child, and
// it fires when the forking thread exits, not the process.
//
// The hook is a package init rather than a subcommand of cmd/lockstep
// because the agent runs inside other binaries too (`lockstep dev`, every
// test binary that starts an agent): whichever binary the agent is linked
// into can supervise its ranks. It acts only on that exact argv[0].

const (
	supervisorArg0 = "lockstep-rank-supervisor"
	// lifelineFD, statusFD and envFD are the supervisor's ExtraFiles (3,
	// 4 and 5). envFD carries the rank's environment (rankEnvOver).
	lifelineFD = 3
	statusFD   = 4
	envFD      = 5
	// maxRankEnv bounds the environment read from envFD; exec refuses far
	// less anyway (a quarter of the stack limit, 2 MiB by default).
	maxRankEnv = 16 << 20
	// envRankToken marks every process of one rank's tree (the rank and its
	// descendants inherit it): a restarted agent finds leftovers by it, and
	// verifies with it that a PID it recorded is still one of ours.
	envRankToken = rankenv.RankToken
	// envRankCgroup names the rank's cgroup directory, if it has one.
	envRankCgroup = "LOCKSTEP_RANK_CGROUP"
)

func init() {
	if len(os.Args) > 2 && os.Args[0] == supervisorArg0 {
		os.Exit(superviseMain(os.Args[1], os.Args[2], os.Args[3:]))
	}
}

// superviseMain runs the rank (path, argv) as cred (see credArg) and
// returns the supervisor's exit code: the rank's own, or 128+signal when a
// signal ended it.
func superviseMain(cred, path string, argv []string) int {
	lifeline := os.NewFile(lifelineFD, "lifeline")
	status := os.NewFile(statusFD, "status")
	envPipe := os.NewFile(envFD, "environment")
	if lifeline == nil || status == nil || envPipe == nil {
		fmt.Fprintln(os.Stderr, "lockstep: rank supervisor started without its pipes")
		return 127
	}
	env, err := readRankEnv(envPipe)
	_ = envPipe.Close()
	if err != nil {
		fmt.Fprintf(status, "error: %v\n", oneLine(err.Error()))
		return 127
	}
	// The rank must not inherit either pipe: it would hold the agent's
	// answer open, and see (or keep) the lifeline.
	syscall.CloseOnExec(lifelineFD)
	syscall.CloseOnExec(statusFD)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(status, "error: become a subreaper: %v\n", err)
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
	rank := &exec.Cmd{Path: path, Args: argv, Env: env,
		Stdout: os.Stdout, Stderr: os.Stderr,
		// If the supervisor itself is killed, the rank goes with it; its
		// own children are then the agent's (or the next agent's) to end.
		// The kernel keeps the signal across the user change: Go sets it
		// after the credential.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: credential}}
	if credential != nil {
		// Enter the working directory again after the user change, so a
		// directory the owner may not enter fails the start instead of
		// being inherited from the supervisor.
		if wd, err := os.Getwd(); err == nil {
			rank.Dir = wd
		}
	}
	if err := rank.Start(); err != nil {
		fmt.Fprintf(status, "error: %v\n", oneLine(err.Error()))
		return 127
	}
	fmt.Fprintf(status, "ok %d\n", rank.Process.Pid)
	_ = status.Close()

	cut := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		close(cut)
	}()
	exited, empty := reapAll(rank.Process.Pid)

	code := 137
	select {
	case ws := <-exited:
		code = waitCode(ws)
	case <-cut:
		// The agent is gone or wants the rank dead: with a cgroup, one write
		// ends every process in it; else walk the tree.
		if cg := os.Getenv(envRankCgroup); cg != "" {
			killOwnCgroup(cg, empty)
			return code
		}
	}
	killTree(empty)
	return code
}

// killOwnCgroup ends every process in the rank's cgroup. The supervisor
// first steps out into the agent's own cgroup, so that it survives the
// kill to remove the rank's cgroup (and the agent's parent of it, if this
// was its last rank): an agent killed for good leaves no empty cgroups.
// If it cannot step out, it dies with the rest and a restarted agent
// removes the cgroup.
func killOwnCgroup(cg string, empty chan struct{}) {
	agentCg := filepath.Dir(filepath.Dir(cg))
	if os.WriteFile(filepath.Join(agentCg, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0) != nil {
		_ = killCgroup(cg)
		<-empty
		return
	}
	if killCgroup(cg) != nil {
		killTree(empty)
	}
	<-empty
	_ = os.Remove(cg)
	_ = os.Remove(filepath.Dir(cg))
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
// forked between a scan and the kills is found by the next scan.
func killTree(empty chan struct{}) {
	for {
		for _, pid := range descendants(os.Getpid()) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-empty:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// descendants lists the processes below root, from /proc.
func descendants(root int) []int {
	kids := map[int][]int{}
	for _, p := range listProcs() {
		kids[p.ppid] = append(kids[p.ppid], p.pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		next := kids[queue[0]]
		queue = queue[1:]
		out = append(out, next...)
		queue = append(queue, next...)
	}
	return out
}

func waitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// The supervisor runs as the agent (root on a real node) and only its
// rank takes the owner's credential, so it must not run with the rank's
// environment: variables the user chose (the spec's env, srun's) would
// steer a root process. LD_PRELOAD alone runs the user's code as root in
// a binary built with cgo, and GODEBUG or GOTRACEBACK change the Go
// runtime's behaviour in any build. The supervisor gets a fixed
// environment of its own (supervisorEnv) and the rank's arrives on envFD,
// NUL-separated, applied only to the rank it starts.

// supervisorEnv is all the supervisor's own environment holds: the token
// (the supervisor is part of the rank's tree) and its cgroup.
func supervisorEnv(token, cgroup string) []string {
	env := []string{envRankToken + "=" + token}
	if cgroup != "" {
		env = append(env, envRankCgroup+"="+cgroup)
	}
	return env
}

// encodeRankEnv is what the agent writes on envFD.
func encodeRankEnv(env []string) []byte {
	var b []byte
	for _, kv := range env {
		b = append(b, kv...)
		b = append(b, 0)
	}
	return b
}

// readRankEnv reads the rank's environment from envFD, to its end.
func readRankEnv(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRankEnv+1))
	switch {
	case err != nil:
		return nil, errors.Wrap(err, "read the rank's environment")
	case len(data) > maxRankEnv:
		return nil, errors.Newf("the rank's environment is over %d bytes", maxRankEnv)
	case len(data) > 0 && data[len(data)-1] != 0:
		return nil, errors.New("the rank's environment ends mid-variable")
	}
	var env []string
	for kv := range strings.SplitSeq(strings.TrimSuffix(string(data), "\x00"), "\x00") {
		if kv != "" {
			env = append(env, kv)
		}
	}
	return env, nil
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// readStatus reads the supervisor's one-line answer: the rank's PID, or
// why it did not start.
func readStatus(r io.Reader) (pid int, err error) {
	line, rerr := bufio.NewReader(r).ReadString('\n')
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return 0, errors.Newf("%s", msg)
	}
	if _, err := fmt.Sscanf(line, "ok %d", &pid); err != nil {
		if rerr != nil {
			return 0, errors.Wrap(rerr, "rank supervisor gave no answer")
		}
		return 0, errors.Newf("rank supervisor answered %q", line)
	}
	return pid, nil
}
